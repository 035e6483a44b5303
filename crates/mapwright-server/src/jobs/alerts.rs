//! E-mail alerts when a sitemap's status gets worse (issue 23): the trigger the scheduler calls
//! once a read's verdict is stored ([`after_read`]), and the mail.
//!
//! The order, best first: Success (`ok`), Has warnings, Has errors, Couldn't fetch (`failed`);
//! a sitemap is judged on its roll-up (an index on its whole tree), and pending is outside the
//! order (a first read never alerts). The store keeps the last status judged per sitemap and
//! moves it by compare-and-set, so a worsening is told once whichever process read it
//! (`Store::alert_worsenings`).
//!
//! Who is mailed: every member of the site whose alerts are on (owners by default, readers once
//! they turn them on), at most one mail per site per [`WINDOW`] (claimed in the store, so it
//! holds across processes: `Store::claim_alert_recipients`), and at most [`PER_ADDRESS`] alert
//! mails a day to one address whatever the sites (counted in the store like the other mail
//! limits). A worsening that finds a member's day used up is not mailed later: the sitemap's
//! page shows it. The mail names each sitemap that got worse, what it was and is, links to its
//! page, and carries an unsubscribe link (`/alerts/unsubscribe?token=...`: a random token per
//! member and site, needing no session; the console's site page turns alerts back on), in its
//! body and in `List-Unsubscribe` with `List-Unsubscribe-Post` (RFC 8058's one-click POST).
//!
//! A process without a mailer (no `--smtp-url` or outbox, a worker without `--public-url`)
//! still moves the marks, so a mailer added later never sends stale news.

use std::fmt::Write as _;
use std::time::Duration;

use mapwright_store::Worsening;

use crate::status::word;
use crate::{AppState, SharedLimit, now};

/// At most one alert mail per member and site in this many seconds.
pub const WINDOW: i64 = 86_400;

/// Alert mail to one address a day, all sites together: a user of a hundred sites whose host
/// goes down gets twenty mails, not a hundred.
pub const PER_ADDRESS: SharedLimit = SharedLimit::new("alert mail per address", 20, Duration::from_secs(86_400));

/// After a read of `sitemap_id` was recorded (its `complete`): mails the site's members about
/// the sitemap and the indexes above it that got worse. Never fails the job: a store or mail
/// error is logged, and the read stands.
pub async fn after_read(state: &AppState, sitemap_id: i64) {
    if let Err(e) = alert(state, sitemap_id).await {
        tracing::warn!(sitemap_id, error = %e, "alerts: cannot judge or mail this read");
    }
}

async fn alert(state: &AppState, sitemap_id: i64) -> Result<(), mapwright_store::Error> {
    let worse = state.store.alert_worsenings(sitemap_id).await?;
    if worse.is_empty() {
        return Ok(());
    }
    let Some(mailer) = state.mail.clone() else {
        tracing::info!(sitemap_id, "alerts: a status got worse, but this process sends no mail");
        return Ok(());
    };
    let site = state.store.sitemap_by_id(sitemap_id).await?.site_id;
    let site = state.store.site_by_id(site).await?;
    let at = now();
    let recipients = state.store.claim_alert_recipients(site.id, at, WINDOW).await?;
    let mut mails = Vec::new();
    for r in recipients {
        if PER_ADDRESS.count(&*state.store, &r.email).await?.is_some() {
            tracing::info!(to = r.email, site = site.origin, "alerts: the address had its alert mail today");
            continue;
        }
        // The recipient's inbox has one budget for every kind of the service's mail.
        if let Err(held) = state.gate.ask(crate::outbound::Target::Mail(&r.email)).await {
            tracing::info!(to = r.email, site = site.origin, %held, "alerts: not mailed");
            continue;
        }
        let body = body(mailer.public_url(), &site.origin, site.id, &worse, &r.token);
        let headers = unsubscribe_headers(mailer.public_url(), &r.token);
        mails.push((r.email, body, headers));
    }
    if mails.is_empty() {
        return Ok(());
    }
    let subject = subject(&site.origin, &worse);
    // One task per read, sending one message after the other: a site's members (at most 50)
    // never crowd out the sign-up mail's slots, and a slow mail server delays no job.
    tokio::spawn(async move {
        for (to, body, headers) in mails {
            match mailer.send_with_headers(&to, &subject, body, &headers).await {
                Ok(()) => tracing::info!(to, subject, "alert mailed"),
                Err(e) => tracing::warn!(to, subject, error = %e, "alert not mailed"),
            }
        }
    });
    Ok(())
}

fn plural(n: i64, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// What the sitemap is now, in words: the status and what stands behind it.
fn now_words(w: &Worsening) -> String {
    let counts = match (w.errors, w.warnings) {
        (0, 0) => None,
        (e, 0) => Some(plural(e, "error")),
        (0, n) => Some(plural(n, "warning")),
        (e, n) => Some(format!("{}, {}", plural(e, "error"), plural(n, "warning"))),
    };
    let own_failed = w.own_status.as_deref() == Some("failed");
    let why = match w.to.as_str() {
        "failed" if w.is_index && !own_failed => Some("a sitemap it lists couldn't be fetched".to_owned()),
        "failed" => w.http_status.map(|s| format!("HTTP {s}")).or_else(|| Some("no answer".to_owned())),
        _ => counts,
    };
    match why {
        Some(why) => format!("{} ({why})", word(&w.to)),
        None => word(&w.to).to_owned(),
    }
}

fn subject(origin: &str, worse: &[Worsening]) -> String {
    let worst = worse.iter().map(|w| w.to.as_str()).max_by_key(|s| mapwright_store::alert_rank(Some(s))).unwrap_or("");
    format!("{}: a sitemap of {origin} got worse", word(worst))
}

/// The link that turns one member's alerts for one site off: the body's, and the one of the
/// `List-Unsubscribe` header. A GET shows its page (mail scanners open links); a POST with the
/// token in the query and `List-Unsubscribe=One-Click` in the body turns the alerts off.
fn unsubscribe_url(base: &str, token: &str) -> String {
    format!("{base}/alerts/unsubscribe?token={token}")
}

/// `List-Unsubscribe` with the link, and `List-Unsubscribe-Post` saying it takes RFC 8058's
/// one-click POST, so a mail client's own "Unsubscribe" works without opening the page.
fn unsubscribe_headers(base: &str, token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("List-Unsubscribe", format!("<{}>", unsubscribe_url(base, token))),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".to_owned()),
    ]
}

/// The mail: each sitemap that got worse, with its page, then the unsubscribe link.
fn body(base: &str, origin: &str, site_id: i64, worse: &[Worsening], token: &str) -> String {
    let mut text = format!(
        "{} of {origin} got worse at {} last read on mapwright:\n\n",
        if worse.len() == 1 { "A sitemap" } else { "Sitemaps" },
        if worse.len() == 1 { "its" } else { "their" },
    );
    for w in worse {
        let what = if w.is_index { " (a sitemap index: its status covers every sitemap it lists)" } else { "" };
        let _ = write!(
            text,
            "  {url}{what}\n  was: {was}\n  now: {now}\n  {base}/sitemaps/{id}\n\n",
            url = w.url,
            was = word(&w.from),
            now = now_words(w),
            id = w.sitemap_id,
        );
    }
    let _ = write!(
        text,
        "You get at most one such mail a day for this site; its page shows every read: {base}/sites/{site_id}\n\n\
         To stop these mails for {origin}, open {link}\n\
         (no sign-in needed; turn them back on on the site's page).\n",
        link = unsubscribe_url(base, token),
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worsening(to: &str, own: &str, is_index: bool) -> Worsening {
        Worsening {
            sitemap_id: 7,
            url: "https://example.com/sitemap.xml".into(),
            is_index,
            own_status: Some(own.into()),
            from: "ok".into(),
            to: to.into(),
            errors: 3,
            warnings: 1,
            http_status: Some(404),
        }
    }

    #[test]
    fn the_mail_names_the_sitemap_the_change_its_page_and_the_unsubscribe_link() {
        let text = body("https://mw.test", "https://example.com", 3, &[worsening("errors", "errors", false)], "abc");
        assert!(
            text.contains(
                "  https://example.com/sitemap.xml\n  was: Success\n  now: Has errors (3 errors, 1 warning)\n"
            )
        );
        assert!(text.contains("https://mw.test/sitemaps/7\n"));
        assert!(text.contains("https://mw.test/alerts/unsubscribe?token=abc\n"));
        assert_eq!(
            unsubscribe_headers("https://mw.test", "abc"),
            [
                ("List-Unsubscribe", "<https://mw.test/alerts/unsubscribe?token=abc>".to_owned()),
                ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".to_owned()),
            ]
        );
    }

    #[test]
    fn an_index_failing_by_a_child_says_so_and_its_own_failure_gives_the_status() {
        assert_eq!(
            now_words(&worsening("failed", "ok", true)),
            "Couldn't fetch (a sitemap it lists couldn't be fetched)"
        );
        assert_eq!(now_words(&worsening("failed", "failed", true)), "Couldn't fetch (HTTP 404)");
        assert_eq!(
            subject("https://e.com", &[worsening("warnings", "ok", false), worsening("failed", "failed", false)]),
            "Couldn't fetch: a sitemap of https://e.com got worse"
        );
    }
}
