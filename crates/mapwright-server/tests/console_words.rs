//! The console's words (issue 23's rough edges): each page's browser title names its object,
//! "Source" and the failing list speak a site owner's words once, Resubmit and Remove name
//! their sitemap to a screen reader, robots.txt is said to be unread before verification, and
//! the note on a waived folder rule is one sentence without command-line advice.

use mapwright_store::{Actor, Source};
use scraper::{Html, Selector};

use crate::console::seed;
use crate::console_answers::{finding, read};
use crate::support::{Auth, each_backend};

fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn text_of(el: &scraper::ElementRef<'_>) -> String {
    el.text().collect::<String>()
}

fn title(html: &str) -> String {
    text_of(&select(&Html::parse_document(html), "title")[0])
}

#[tokio::test]
async fn pages_name_their_object_in_plain_words_and_buttons_name_their_row() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let actor = Actor { user_id: s.site.owner_id, is_admin: false };
        let auth = Auth::Cookie(&s.cookie);
        // Verified, robots.txt naming no sitemap: said as what was read, not as "none found yet".
        let (_, _, html) = app.get(&format!("/sites/{}", s.site.id), auth).await;
        let robots: String = select(&Html::parse_document(&html), "#robots-none").iter().map(text_of).collect();
        assert!(robots.contains("named no sitemap"), "{html}");
        let other = app.store.add_sitemap(actor, s.site.id, "https://ann.example/news.xml", Source::Robots, 0).await;
        let other = other.unwrap();

        // Titles: each sitemap's page, its confirmation and its findings name it; no two alike.
        let mut titles = Vec::new();
        for path in [
            format!("/sitemaps/{}", s.sitemap.id),
            format!("/sitemaps/{}", other.id),
            format!("/sitemaps/{}/remove", s.sitemap.id),
            format!("/sitemaps/{}/findings?rule=loc-not-absolute", s.sitemap.id),
            format!("/sites/{}/delete", s.site.id),
        ] {
            let (_, _, html) = app.get(&path, auth).await;
            titles.push(title(&html));
        }
        assert!(titles[0].contains(&s.sitemap.url) && titles[1].contains(&other.url), "{titles:?}");
        assert!(titles[2].contains(&s.sitemap.url) && titles[3].contains(&s.sitemap.url), "{titles:?}");
        assert!(titles[4].contains("https://ann.example"), "{titles:?}");
        let mut distinct = titles.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), titles.len(), "{titles:?}");

        // Source in words, never the stored value.
        for (id, words) in [(s.sitemap.id, "Submitted by an owner"), (other.id, "Named in the site's robots.txt")] {
            let (_, _, html) = app.get(&format!("/sitemaps/{id}"), auth).await;
            let doc = Html::parse_document(&html);
            let facts: Vec<String> = select(&doc, "dl.facts > *").iter().map(text_of).collect();
            let at = facts.iter().position(|f| f == "Source").expect("a Source fact");
            assert_eq!(facts[at + 1], words);
            // The page's own buttons name the sitemap.
            let resubmit = select(&doc, "main form[action$='/resubmit'] button");
            let url = if id == s.sitemap.id { &s.sitemap.url } else { &other.url };
            assert_eq!(resubmit[0].value().attr("aria-label"), Some(format!("Resubmit {url}").as_str()));
            let remove = select(&doc, "main a[href$='/remove']");
            assert_eq!(remove[0].value().attr("aria-label"), Some(format!("Remove {url}").as_str()));
        }

        // The table: every Resubmit and Remove has a name of its own, naming its row's sitemap.
        let (_, _, html) = app.get("/", auth).await;
        let doc = Html::parse_document(&html);
        let mut names = Vec::new();
        for el in select(&doc, "table.sitemaps button, table.sitemaps a.button") {
            let name = el.value().attr("aria-label").expect("an accessible name").to_owned();
            assert!(name.starts_with(text_of(&el).trim()), "the visible label starts the name: {name}");
            names.push(name);
        }
        for url in [&s.sitemap.url, &other.url] {
            assert!(
                names.contains(&format!("Resubmit {url}")) && names.contains(&format!("Remove {url}")),
                "{names:?}"
            );
        }

        // The failing list: the status and its name once, the URL once per row.
        let (_, _, html) = app.get(&format!("/sites/{}", s.site.id), auth).await;
        let doc = Html::parse_document(&html);
        let rows = select(&doc, "#failing-urls tbody tr");
        let row = rows.iter().map(text_of).find(|t| t.contains("/missing")).expect("the failing row");
        assert!(row.contains("404 Not found") && !row.contains("404 404"), "{row}");
        assert_eq!(row.matches("https://ann.example/missing").count(), 1, "{row}");
    })
    .await;
}

#[tokio::test]
async fn the_waived_folder_rule_is_one_sentence_without_command_line_advice() {
    each_backend(false, |app| async move {
        let s = seed(&app, "ann@example.com", "https://ann.example").await;
        let mut vouched = finding("scope-vouched", "info", 1, "https://ann.example/");
        vouched.loc = None;
        vouched.message = "https://ann.example/robots.txt names this sitemap: it may list any URL".into();
        read(&app, s.sitemap.id, "ok", 2, None, vec![vouched]).await;
        for page in [format!("/sitemaps/{}", s.sitemap.id), format!("/sites/{}", s.site.id)] {
            let (_, _, html) = app.get(&page, Auth::Cookie(&s.cookie)).await;
            let doc = Html::parse_document(&html);
            let group =
                select(&doc, "section.group").into_iter().map(|g| text_of(&g)).find(|t| t.contains("scope-vouched"));
            let group = group.expect("the scope-vouched group");
            assert_eq!(group.matches("Nothing to fix").count(), 1, "{group}");
            assert!(!group.contains("--") && !group.contains("How to fix") && group.len() < 600, "{group}");
        }
    })
    .await;
}

#[tokio::test]
async fn an_empty_table_points_at_the_site_waiting_for_verification() {
    each_backend(false, |app| async move {
        let user = app.store.create_user("bo@example.com", "h", false, 0).await.unwrap();
        let session = app.store.create_session(user.id, crate::console_answers::now_for_tests(), 3600).await.unwrap();
        let cookie = format!("mapwright_session={session}");
        let (_, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
        assert!(html.contains("Add your first sitemap") && !html.contains("verify-first"), "{html}");
        let site = app.store.create_site(Actor::from(&user), "https://bo.example", 0).await.unwrap();
        let (_, _, html) = app.get("/", Auth::Cookie(&cookie)).await;
        let doc = Html::parse_document(&html);
        let next = select(&doc, "#verify-first");
        assert_eq!(text_of(&next[0]), "No sitemaps yet: verify https://bo.example to have its sitemaps read.");
        assert_eq!(
            select(&doc, "#verify-first a")[0].value().attr("href"),
            Some(format!("/sites/{}", site.id).as_str())
        );
        assert!(!html.contains("Add your first sitemap"), "one next step: {html}");
    })
    .await;
}
