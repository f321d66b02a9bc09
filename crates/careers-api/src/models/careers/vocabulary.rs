//! The closed vocabularies of a job's attributes (CONTRACT §15), shared by the job's form and
//! the marketplace's search filters.

/// schema.org's employment types, as the API spells them.
pub const EMPLOYMENT_TYPES: [&str; 8] = [
    "full_time",
    "part_time",
    "contractor",
    "temporary",
    "intern",
    "volunteer",
    "per_diem",
    "other",
];
pub const WORKPLACE_TYPES: [&str; 3] = ["on_site", "hybrid", "remote"];
pub const SALARY_INTERVALS: [&str; 5] = ["hour", "day", "week", "month", "year"];

/// Whether `code` is an ISO 3166-1 alpha-2 code, upper case.
pub fn is_country_code(code: &str) -> bool {
    code.bytes().all(|b| b.is_ascii_uppercase())
        && isocountry::CountryCode::for_alpha2(code).is_ok()
}
