//! `Careers::*`: talent profiles (with their certificates, experiences and skills), jobs and
//! job applications.
//!
//! Responses join at most three tables; has-many children are loaded with one batched query
//! per association, so a list costs the same number of statements whatever its length.

pub mod briefs;
pub mod certificate;
pub mod experience;
pub mod job;
pub mod job_application;
pub mod job_application_event;
pub mod job_application_note;
pub mod job_posting;
pub mod job_stage;
pub mod nested;
pub mod search;
pub mod skill;
pub mod user_profile;
pub mod vocabulary;
