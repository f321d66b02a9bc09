//! The marketplace's job search (CONTRACT §15) on the database the deployment runs: SQLite's
//! FTS5 on the embedded default, PostgreSQL's full-text search (`tsvector`, GIN) on production.
//! No search engine is written here: the text match is the database's, behind [`TextIndex`]
//! (a deployment that outgrows PostgreSQL can put a search server behind it); the filters, the
//! sorts and the facets are plain SQL shared by both.
//!
//! Both backends index the same folded text ([`fold`]: transliterated to ASCII by `deunicode`,
//! lower case, every run of other characters one space), so that accents, case and punctuation
//! match alike on both, and words are whole tokens (no stemming).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement, Value};
use serde::{Deserialize, Serialize};

use crate::db::DataError;

use crate::forms::fold_text;

/// A parsed `q`: whole words and `"quoted phrases"`, every one of which must match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextQuery {
    /// Each a list of words: one word, or a phrase's words in order.
    pub terms: Vec<Vec<String>>,
}

impl TextQuery {
    /// The query of `q`; `None` when it has no letter or digit (it is then ignored).
    pub fn parse(q: &str) -> Option<Self> {
        let mut terms = Vec::new();
        for (n, part) in q.split('"').enumerate() {
            let words: Vec<String> = fold_text(part)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            if n % 2 == 1 {
                if !words.is_empty() {
                    terms.push(words);
                }
            } else {
                terms.extend(words.into_iter().map(|w| vec![w]));
            }
        }
        (!terms.is_empty()).then_some(Self { terms })
    }

    /// FTS5's query: each term a quoted string (a phrase when it has several words), ANDed.
    fn fts5(&self) -> String {
        self.terms
            .iter()
            .map(|words| format!("\"{}\"", words.join(" ")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// PostgreSQL's `tsquery` text: each term a word or a `<->` phrase, `&`-joined. The words
    /// are `[a-z0-9]+` (folded), so nothing in them is `tsquery` syntax. A phrase must lie
    /// within one part of the weighted `search_vector` (title `A`, body `B`, company `C`):
    /// concatenated vectors number their words on across the parts, and a phrase must not run
    /// from the title's last word into the body's first (FTS5's columns keep them apart too).
    /// The phrase is also given unweighted, which it implies: without it PostgreSQL's planner
    /// misjudges the weighted alternatives as matching a fifth of the jobs and scans the table
    /// (`bench-results/search-plans.md`).
    fn tsquery(&self) -> String {
        self.joined(|words| match words {
            [word] => format!("({word})"),
            _ => format!(
                "({} & ({} | {} | {}))",
                words.join(" <-> "),
                within(words, "A"),
                within(words, "B"),
                within(words, "C")
            ),
        })
    }

    /// The `tsquery` text of the terms alone (for a vector of one part: the title's).
    fn tsquery_plain(&self) -> String {
        self.joined(|words| format!("({})", words.join(" <-> ")))
    }

    fn joined(&self, term: impl Fn(&[String]) -> String) -> String {
        self.terms
            .iter()
            .map(|words| term(words))
            .collect::<Vec<_>>()
            .join(" & ")
    }
}

/// A word or a phrase as a `tsquery` term found within the part of `weight`.
fn within(words: &[String], weight: &str) -> String {
    let words: Vec<String> = words.iter().map(|w| format!("{w}:{weight}")).collect();
    format!("({})", words.join(" <-> "))
}

/// The database's text match: the condition that keeps the jobs matching `q` anywhere, and an
/// expression that is 1 for a job whose title alone matches (relevance ranks those first).
/// `j` is the jobs table; `bind` adds a value and answers its placeholder.
pub trait TextIndex: Sync {
    /// The jobs table as `j`, joined from the text index when a query is matched, so that the
    /// engine walks the matches rather than testing the match row by row.
    fn jobs(&self, matching: bool) -> &'static str;
    fn matches(&self, q: &TextQuery, bind: &mut Binds) -> String;
    fn title_matches(&self, q: &TextQuery, bind: &mut Binds) -> String;
}

/// SQLite: the FTS5 table `careers_jobs_fts` over the jobs' folded columns.
pub struct Fts5;

impl TextIndex for Fts5 {
    fn jobs(&self, matching: bool) -> &'static str {
        // SQLite keeps a CROSS JOIN's order: the matches first, then their jobs. Each job is
        // read from the narrow index of the columns the search reads (migration 11) rather than
        // from its wide row (SQLite would look a rowid up in the table, or scan it).
        if matching {
            "careers_jobs_fts CROSS JOIN careers_jobs j INDEXED BY careers_jobs_search_filters \
             ON j.id = careers_jobs_fts.rowid"
        } else {
            "careers_jobs j INDEXED BY careers_jobs_search_filters"
        }
    }

    fn matches(&self, q: &TextQuery, bind: &mut Binds) -> String {
        let p = bind.push(q.fts5().into());
        format!("careers_jobs_fts MATCH {p}")
    }

    fn title_matches(&self, q: &TextQuery, bind: &mut Binds) -> String {
        let p = bind.push(format!("search_title : ({})", q.fts5()).into());
        format!(
            "CASE WHEN j.id IN (SELECT rowid FROM careers_jobs_fts \
             WHERE careers_jobs_fts MATCH {p}) THEN 1 ELSE 0 END"
        )
    }
}

/// PostgreSQL: the generated `search_vector` (GIN-indexed) of the jobs' folded columns.
pub struct Tsvector;

impl TextIndex for Tsvector {
    fn jobs(&self, _: bool) -> &'static str {
        "careers_jobs j"
    }

    fn matches(&self, q: &TextQuery, bind: &mut Binds) -> String {
        let p = bind.push(q.tsquery().into());
        format!("j.search_vector @@ {}", once(&p))
    }

    fn title_matches(&self, q: &TextQuery, bind: &mut Binds) -> String {
        // The title's own vector (migration 11): small to read and test for every match.
        let p = bind.push(q.tsquery_plain().into());
        format!(
            "CASE WHEN j.search_title_vector @@ {} THEN 1 ELSE 0 END",
            once(&p)
        )
    }
}

/// The `tsquery` of the text bound at `p`, parsed once per statement: a scalar subquery is
/// evaluated once (an InitPlan), where `to_tsquery('simple', $n)` is parsed again for every row
/// tested once the statement runs on a generic plan (after five executions of the prepared
/// statement), which took a phrase search from 28 to 70 ms at 100,000 jobs.
fn once(p: &str) -> String {
    format!("(SELECT to_tsquery('simple', {p}))")
}

/// A statement's values, numbered as both backends read them (`$1`, `$2`...).
#[derive(Debug, Default, Clone)]
pub struct Binds(Vec<Value>);

impl Binds {
    pub fn push(&mut self, value: Value) -> String {
        self.0.push(value);
        format!("${}", self.0.len())
    }
}

/// The marketplace's search parameters (CONTRACT §15); each filter may repeat.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// Full text: every word as a whole word, `"quoted phrases"` as phrases; at most 200
    /// characters.
    pub q: Option<String>,
    /// ISO 3166-1 alpha-2; repeatable.
    #[serde(default)]
    pub country_code: Vec<String>,
    /// `on_site`, `hybrid`, `remote`; repeatable.
    #[serde(default)]
    pub workplace_type: Vec<String>,
    /// schema.org's employment types; repeatable.
    #[serde(default)]
    pub employment_type: Vec<String>,
    /// Repeatable.
    #[serde(default)]
    pub company_id: Vec<i64>,
    /// A date (UTC): jobs first published on or after its start.
    pub posted_since: Option<NaiveDate>,
    /// With `salary_currency` and `salary_interval`: jobs paying at least this much.
    pub salary_min: Option<i64>,
    pub salary_currency: Option<String>,
    pub salary_interval: Option<String>,
    /// `relevance` (the default with `q`) or `newest` (the default without).
    pub sort: Option<String>,
    /// Page number, from 1.
    pub page: Option<u64>,
    /// Items per page, 1 to 100 (default 25); `page × per_page` at most 10,000.
    pub per_page: Option<u64>,
}

/// Why search parameters are refused (a 400 at the boundary).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadSearch(pub String);

/// The facets of a search: for each, the count of jobs per value matching `q` and every filter
/// but that facet's own.
#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub struct Facets {
    pub workplace_type: BTreeMap<String, u64>,
    pub employment_type: BTreeMap<String, u64>,
    pub country_code: BTreeMap<String, u64>,
}

impl Facets {
    fn of(&mut self, facet: Facet) -> &mut BTreeMap<String, u64> {
        match facet {
            Facet::WorkplaceType => &mut self.workplace_type,
            Facet::EmploymentType => &mut self.employment_type,
            Facet::CountryCode => &mut self.country_code,
        }
    }
}

/// A checked search: the text query, the filters, the sort, the page.
#[derive(Debug)]
pub struct Search {
    text: Option<TextQuery>,
    country_code: Vec<String>,
    workplace_type: Vec<String>,
    employment_type: Vec<String>,
    company_id: Vec<i64>,
    posted_since: Option<DateTime<Utc>>,
    salary: Option<(i64, String, String)>,
    by_relevance: bool,
    pub page: u64,
    pub per_page: u64,
}

impl SearchParams {
    /// The search these parameters ask for, or why they are refused.
    pub fn check(self, page: u64, per_page: u64) -> Result<Search, BadSearch> {
        let bad = |m: &str| Err(BadSearch(m.to_owned()));
        if self.q.as_ref().is_some_and(|q| q.chars().count() > 200) {
            return bad("q must be at most 200 characters");
        }
        if page.saturating_mul(per_page) > 10_000 {
            return bad("page × per_page must be at most 10000");
        }
        use super::vocabulary::{
            EMPLOYMENT_TYPES, SALARY_INTERVALS, WORKPLACE_TYPES, is_country_code,
        };
        if !self.country_code.iter().all(|c| is_country_code(c)) {
            return bad("country_code must be ISO 3166-1 alpha-2 codes in upper case");
        }
        if !self
            .workplace_type
            .iter()
            .all(|w| WORKPLACE_TYPES.contains(&w.as_str()))
        {
            return bad("unknown workplace_type");
        }
        if !self
            .employment_type
            .iter()
            .all(|e| EMPLOYMENT_TYPES.contains(&e.as_str()))
        {
            return bad("unknown employment_type");
        }
        let salary = match (self.salary_min, self.salary_currency, self.salary_interval) {
            (None, None, None) => None,
            (Some(min), Some(currency), Some(interval))
                if min >= 0
                    && iso_currency::Currency::from_code(&currency).is_some()
                    && SALARY_INTERVALS.contains(&interval.as_str()) =>
            {
                Some((min, currency, interval))
            }
            _ => {
                return bad(
                    "salary_min needs salary_currency (ISO 4217) and salary_interval, and is 0 or more",
                );
            }
        };
        let text = self.q.as_deref().and_then(TextQuery::parse);
        let by_relevance = match self.sort.as_deref() {
            None => text.is_some(),
            Some("relevance") => true,
            Some("newest") => false,
            Some(_) => return bad("sort must be relevance or newest"),
        };
        Ok(Search {
            text,
            country_code: self.country_code,
            workplace_type: self.workplace_type,
            employment_type: self.employment_type,
            company_id: self.company_id,
            posted_since: self
                .posted_since
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc()),
            salary,
            by_relevance,
            page,
            per_page,
        })
    }
}

/// A filter column of the facets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Facet {
    WorkplaceType,
    EmploymentType,
    CountryCode,
}

impl Facet {
    const ALL: [Facet; 3] = [
        Facet::WorkplaceType,
        Facet::EmploymentType,
        Facet::CountryCode,
    ];

    fn column(self) -> &'static str {
        match self {
            Facet::WorkplaceType => "j.workplace_type",
            Facet::EmploymentType => "j.employment_type",
            Facet::CountryCode => "j.country_code",
        }
    }
}

impl Search {
    /// `WHERE` of the jobs the search and its facets count: every condition but the facets'
    /// own filters ([`Search::facet_filters`]).
    fn conditions(&self, index: &dyn TextIndex, now: DateTime<Utc>, binds: &mut Binds) -> String {
        let now = binds.push(now.into());
        let mut sql = format!(
            "j.status = 'open' AND (j.valid_through IS NULL OR j.valid_through > {now}) \
             AND c.suspended_at IS NULL"
        );
        if let Some(text) = &self.text {
            sql.push_str(" AND ");
            sql.push_str(&index.matches(text, binds));
        }
        if !self.company_id.is_empty() {
            let ids = self.company_id.iter().map(|&id| id.into());
            sql.push_str(&format!(" AND {}", any_of("j.company_id", ids, binds)));
        }
        if let Some(since) = self.posted_since {
            let p = binds.push(since.into());
            sql.push_str(&format!(" AND j.published_at >= {p}"));
        }
        if let Some((min, currency, interval)) = &self.salary {
            let (m, c, i) = (
                binds.push((*min).into()),
                binds.push(currency.clone().into()),
                binds.push(interval.clone().into()),
            );
            sql.push_str(&format!(
                " AND j.salary_currency = {c} AND j.salary_interval = {i} \
                 AND COALESCE(j.salary_max, j.salary_min) >= {m}"
            ));
        }
        sql
    }

    /// The condition of the facets' own filters (`TRUE` when none is set): the page's jobs pass
    /// it, each facet counts the jobs that pass all but its own.
    fn facet_filters(&self, binds: &mut Binds) -> String {
        let kept: Vec<String> = Facet::ALL
            .into_iter()
            .filter(|&facet| !self.chosen(facet).is_empty())
            .map(|facet| {
                let values = self.chosen(facet).iter().map(|v| v.clone().into());
                any_of(facet.column(), values, binds)
            })
            .collect();
        if kept.is_empty() {
            "TRUE".to_owned()
        } else {
            format!("({})", kept.join(" AND "))
        }
    }

    /// The values a facet's filter keeps (none: every value).
    fn chosen(&self, facet: Facet) -> &[String] {
        match facet {
            Facet::WorkplaceType => &self.workplace_type,
            Facet::EmploymentType => &self.employment_type,
            Facet::CountryCode => &self.country_code,
        }
    }

    /// Whether a job with these facet values passes every facet's filter but `except`'s.
    fn keeps(&self, values: &[Option<String>; 3], except: Option<Facet>) -> bool {
        Facet::ALL.iter().zip(values).all(|(&facet, value)| {
            let chosen = self.chosen(facet);
            Some(facet) == except
                || chosen.is_empty()
                || value.as_ref().is_some_and(|v| chosen.contains(v))
        })
    }
}

/// `column IN (…)` of `values`, bound.
fn any_of(column: &str, values: impl Iterator<Item = Value>, binds: &mut Binds) -> String {
    let list: Vec<String> = values.map(|v| binds.push(v)).collect();
    format!("{column} IN ({})", list.join(", "))
}

/// The index of the backend `db` runs on.
pub fn index_of(db: &DatabaseConnection) -> &'static dyn TextIndex {
    match db.get_database_backend() {
        DatabaseBackend::Postgres => &Tsvector,
        _ => &Fts5,
    }
}

/// One page of a search: the ids in order, the total, the facets. One statement whatever the
/// page size: the text index finds the matches once, kept as `m` (a materialised CTE) with what
/// the page and the facets need; the page is the first rows of `m` that pass the facets' own
/// filters, numbered in the search's order; the facets are `m`'s counts by the three facet
/// columns, from which the total and each facet (every filter but its own) are summed here.
pub async fn search(
    db: &DatabaseConnection,
    search: &Search,
    now: DateTime<Utc>,
) -> Result<(Vec<i64>, u64, Facets), DataError> {
    let index = index_of(db);
    let backend = db.get_database_backend();
    let jobs = index.jobs(search.text.is_some());
    let mut binds = Binds::default();
    let conditions = search.conditions(index, now, &mut binds);
    let kept = search.facet_filters(&mut binds);
    let title_first = match (&search.text, search.by_relevance) {
        (Some(text), true) => index.title_matches(text, &mut binds),
        _ => "0".to_owned(),
    };
    let limit = binds.push((search.per_page as i64).into());
    let offset = binds.push((((search.page - 1) * search.per_page) as i64).into());
    let order = "title_first DESC, published_at DESC, id DESC";
    // The page's rows carry their place `n` (numbered after the limit: the engine keeps the
    // top rows rather than sorting every match) and no counts; the facets' rows carry no id.
    let sql = format!(
        "WITH m AS MATERIALIZED (SELECT j.id, j.published_at, {title_first} AS title_first, \
         {kept} AS kept, j.workplace_type, j.employment_type, j.country_code \
         FROM {jobs} INNER JOIN org_companies c ON c.id = j.company_id WHERE {conditions}) \
         SELECT ROW_NUMBER() OVER (ORDER BY {order}) AS n, id, \
         NULL AS workplace_type, NULL AS employment_type, NULL AS country_code, \
         CAST(NULL AS BIGINT) AS count FROM (SELECT id, title_first, published_at FROM m \
         WHERE kept ORDER BY {order} LIMIT {limit} OFFSET {offset}) page \
         UNION ALL SELECT NULL, NULL, workplace_type, employment_type, country_code, COUNT(*) \
         FROM m GROUP BY workplace_type, employment_type, country_code"
    );
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(backend, sql, binds.0))
        .await?;
    let (mut page, mut total, mut facets) = (Vec::new(), 0, Facets::default());
    for row in rows {
        if let Some(n) = row.try_get_by_index::<Option<i64>>(0)? {
            page.push((n, row.try_get_by_index::<i64>(1)?));
            continue;
        }
        let values: [Option<String>; 3] = [
            row.try_get_by_index(2)?,
            row.try_get_by_index(3)?,
            row.try_get_by_index(4)?,
        ];
        let count = row.try_get_by_index::<i64>(5)? as u64;
        if search.keeps(&values, None) {
            total += count;
        }
        for (facet, value) in Facet::ALL.into_iter().zip(&values) {
            if let Some(value) = value
                && search.keeps(&values, Some(facet))
            {
                *facets.of(facet).entry(value.clone()).or_default() += count;
            }
        }
    }
    page.sort_unstable();
    Ok((page.into_iter().map(|(_, id)| id).collect(), total, facets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_fold_words_and_keep_phrases() {
        let q = TextQuery::parse("Rust  \"Senior Développeur\" remote!").unwrap();
        assert_eq!(
            q.terms,
            [vec!["rust"], vec!["senior", "developpeur"], vec!["remote"]]
                .map(|t| t.iter().map(|w| w.to_string()).collect::<Vec<_>>())
        );
        assert_eq!(q.fts5(), "\"rust\" \"senior developpeur\" \"remote\"");
        assert_eq!(
            q.tsquery(),
            "(rust) & (senior <-> developpeur & ((senior:A <-> developpeur:A) | \
             (senior:B <-> developpeur:B) | (senior:C <-> developpeur:C))) & (remote)"
        );
        assert_eq!(
            q.tsquery_plain(),
            "(rust) & (senior <-> developpeur) & (remote)"
        );
        assert_eq!(TextQuery::parse("  !!! \"\" "), None);
        assert_eq!(
            fold_text("Société Générale, C++ & Ünïcode"),
            "societe generale c unicode"
        );
    }
}
