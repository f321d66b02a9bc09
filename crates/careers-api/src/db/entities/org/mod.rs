pub mod company;
pub mod user_profile;
