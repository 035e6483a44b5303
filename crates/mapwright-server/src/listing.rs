//! The query parameters of a sorted and filtered sitemap list (`status`, `type`, `errors`,
//! `sort`, `order`), read the same way by the API's list of a site's sitemaps and the
//! console's table; the store answers the [`SitemapListing`] in one query.

use mapwright_store::{SitemapListing, SortKey, StatusFilter, TypeFilter};

use crate::AppError;

/// The listing of the parameters `get` returns. `strict` (the API): an unknown value is 400;
/// otherwise (the console's links, which a user may edit) it is left out.
pub(crate) fn parse<'a>(
    get: impl Fn(&str) -> Result<Option<&'a str>, AppError>,
    strict: bool,
) -> Result<SitemapListing, AppError> {
    fn pick<T>(
        name: &str,
        value: Option<&str>,
        parse: impl Fn(&str) -> Option<T>,
        names: &[&str],
        strict: bool,
    ) -> Result<Option<T>, AppError> {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
        match parse(value) {
            Some(v) => Ok(Some(v)),
            None if strict => Err(AppError::BadRequest(format!(
                "the parameter {name} must be one of {}, not {value:?}",
                names.join(", ")
            ))),
            None => Ok(None),
        }
    }
    let statuses: Vec<&str> = StatusFilter::ALL.iter().map(|s| s.as_str()).collect();
    let types: Vec<&str> = TypeFilter::ALL.iter().map(|t| t.as_str()).collect();
    let keys: Vec<&str> = SortKey::ALL.iter().map(|k| k.as_str()).collect();
    let truth = |v: &str| match v {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let order = |v: &str| match v {
        "asc" => Some(false),
        "desc" => Some(true),
        _ => None,
    };
    Ok(SitemapListing {
        status: pick("status", get("status")?, StatusFilter::parse, &statuses, strict)?,
        kind: pick("type", get("type")?, TypeFilter::parse, &types, strict)?,
        with_errors: pick("errors", get("errors")?, truth, &["true", "false"], strict)?.unwrap_or(false),
        sort: pick("sort", get("sort")?, SortKey::parse, &keys, strict)?.unwrap_or_default(),
        desc: pick("order", get("order")?, order, &["asc", "desc"], strict)?.unwrap_or(false),
    })
}

/// The query string of a listing (empty for the plain list), `&`-joined, without `?`.
pub(crate) fn query(listing: &SitemapListing) -> String {
    let mut parts = Vec::new();
    if let Some(s) = listing.status {
        parts.push(format!("status={}", s.as_str()));
    }
    if let Some(t) = listing.kind {
        parts.push(format!("type={}", t.as_str()));
    }
    if listing.with_errors {
        parts.push("errors=true".to_owned());
    }
    if listing.sort != SortKey::Added {
        parts.push(format!("sort={}", listing.sort.as_str()));
    }
    if listing.desc {
        parts.push("order=desc".to_owned());
    }
    parts.join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(&'static str, &'static str)], strict: bool) -> Result<SitemapListing, AppError> {
        parse(|name| Ok(pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)), strict)
    }

    #[test]
    fn parameters_round_trip_and_bad_values_are_refused_or_left_out() {
        let listing =
            of(&[("status", "errors"), ("type", "sitemap_index"), ("sort", "last_read"), ("order", "desc")], true)
                .unwrap();
        assert_eq!(listing.status, Some(StatusFilter::Errors));
        assert_eq!(listing.kind, Some(TypeFilter::SitemapIndex));
        assert_eq!((listing.sort, listing.desc), (SortKey::LastRead, true));
        assert_eq!(query(&listing), "status=errors&type=sitemap_index&sort=last_read&order=desc");
        assert!(of(&[], true).unwrap().is_plain());
        assert_eq!(query(&of(&[], true).unwrap()), "");
        assert!(of(&[("status", "bogus")], true).is_err());
        assert!(of(&[("sort", "id")], true).is_err());
        assert!(of(&[("errors", "yes")], true).is_err());
        assert!(of(&[("status", "bogus"), ("sort", "id")], false).unwrap().is_plain());
        assert!(of(&[("errors", "true")], true).unwrap().with_errors);
    }
}
