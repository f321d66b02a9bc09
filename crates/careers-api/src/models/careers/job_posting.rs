//! A job as schema.org's `JobPosting` in JSON-LD (CONTRACT §15), the form search engines read
//! (Google for Jobs) from the marketplace's job page.

use chrono::SecondsFormat;
use serde_json::{Map, Value, json};

use super::job::JobView;

/// The `JobPosting` of `job`, whose company's website is `website`.
pub fn job_posting(job: &JobView, website: Option<&str>) -> Value {
    let mut posting = Map::new();
    let mut put = |key: &str, value: Value| {
        posting.insert(key.to_owned(), value);
    };
    put("@context", json!("https://schema.org"));
    put("@type", json!("JobPosting"));
    put("title", json!(job.title));
    put("description", json!(job.description));
    if let Some(posted) = job.published_at {
        put("datePosted", json!(posted.date_naive().to_string()));
    }
    if let Some(until) = job.valid_through {
        put(
            "validThrough",
            json!(until.to_rfc3339_opts(SecondsFormat::Secs, true)),
        );
    }
    if let Some(kind) = &job.employment_type {
        put("employmentType", json!(kind.to_uppercase()));
    }
    let mut organization = json!({"@type": "Organization", "name": job.company.name});
    if let Some(website) = website {
        organization["sameAs"] = json!(website);
    }
    put("hiringOrganization", organization);
    if job.workplace_type == "remote" {
        put("jobLocationType", json!("TELECOMMUTE"));
        if let Some(country) = &job.country_code {
            put(
                "applicantLocationRequirements",
                json!({"@type": "Country", "name": country}),
            );
        }
    } else if let Some(country) = &job.country_code {
        let mut address = json!({"@type": "PostalAddress", "addressCountry": country});
        if let Some(locality) = &job.locality {
            address["addressLocality"] = json!(locality);
        }
        if let Some(region) = &job.region {
            address["addressRegion"] = json!(region);
        }
        put("jobLocation", json!({"@type": "Place", "address": address}));
    }
    if let (Some(currency), Some(interval)) = (&job.salary_currency, &job.salary_interval)
        && (job.salary_min.is_some() || job.salary_max.is_some())
    {
        let mut value = json!({"@type": "QuantitativeValue", "unitText": interval.to_uppercase()});
        if let Some(min) = job.salary_min {
            value["minValue"] = json!(min);
        }
        if let Some(max) = job.salary_max {
            value["maxValue"] = json!(max);
        }
        put(
            "baseSalary",
            json!({"@type": "MonetaryAmount", "currency": currency, "value": value}),
        );
    }
    put("directApply", json!(true));
    put(
        "identifier",
        json!({"@type": "PropertyValue", "name": job.company.name, "value": job.id}),
    );
    Value::Object(posting)
}
