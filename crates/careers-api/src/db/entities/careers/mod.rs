pub mod certificate;
pub mod experience;
pub mod job;
pub mod job_application;
pub mod skill;
pub mod user_profile;
