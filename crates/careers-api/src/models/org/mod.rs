//! `Org::*`: companies and the org profiles that make a user an employer of one.

pub mod company;
pub mod user_profile;

/// Whose records a caller may see and name: an employer's own company, or all (admin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Company(i64),
    All,
}

impl Scope {
    pub fn allows(self, company_id: i64) -> bool {
        match self {
            Scope::Company(own) => own == company_id,
            Scope::All => true,
        }
    }
}
