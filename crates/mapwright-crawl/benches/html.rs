//! Link extraction from a realistic page: lol_html (what the crawler uses) against
//! html5ever's tokenizer (no tree), to choose the crawler's HTML parser by measurement.
//! Both are fed the page in 16 KiB chunks, as a body arrives, and collect the same things:
//! `<a href>`, `<link href>` and `<meta>` robots.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};
use std::cell::RefCell;
use std::hint::black_box;

/// A page like a blog's: a head with meta and link tags, a script, navigation, an article with
/// inline links, a footer: about 60 KiB and 400 links.
fn page() -> String {
    let mut s = String::from(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>A post</title>\
         <meta name=viewport content=\"width=device-width\"><meta name=robots content=\"index,follow\">\
         <link rel=canonical href=\"https://example.com/blog/a-post/\"><link rel=stylesheet href=/s.css>\
         <link rel=alternate hreflang=de href=\"https://example.com/de/blog/a-post/\">\
         <script>window.dataLayer=[];function g(){dataLayer.push(arguments)}var x='<a href=\"/no\">';</script>\
         <style>.nav a{color:red}</style></head><body><header><nav><ul>",
    );
    for i in 0..60 {
        s.push_str(&format!(
            "<li class=\"nav-item\"><a class=\"nav-link\" href=\"/section/{i}/\">Section {i}</a></li>"
        ));
    }
    s.push_str("</ul></nav></header><main><article>");
    for p in 0..120 {
        s.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ");
        s.push_str(&format!("See <a href=\"../related-{p}/?ref=post&amp;utm_source=x\">this related post</a> and "));
        s.push_str(&format!("<a href=\"https://other.example/{p}\" rel=nofollow>elsewhere</a>. Ut enim ad minim veniam, quis nostrud &amp; exercitation.</p>"));
        if p % 10 == 0 {
            s.push_str(&format!(
                "<figure><img src=\"/img/{p}.jpg\" alt=\"picture {p}\"><figcaption>Caption {p}</figcaption></figure>"
            ));
        }
    }
    s.push_str("</article></main><footer>");
    for i in 0..100 {
        s.push_str(&format!("<a href=\"/tag/{i}\">tag {i}</a> "));
    }
    s.push_str("<!-- <a href=\"/commented\"> --></footer></body></html>");
    s
}

#[derive(Default)]
struct Links {
    links: RefCell<Vec<String>>,
}

impl TokenSink for Links {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        if let Token::TagToken(tag) = token {
            if tag.kind != TagKind::StartTag {
                return TokenSinkResult::Continue;
            }
            match &*tag.name {
                "a" | "area" | "link" => {
                    if let Some(a) = tag.attrs.iter().find(|a| &*a.name.local == "href") {
                        self.links.borrow_mut().push(a.value.to_string());
                    }
                }
                "meta"
                    if tag.attrs.iter().any(|a| &*a.name.local == "name" && a.value.eq_ignore_ascii_case("robots")) =>
                {
                    self.links.borrow_mut().push(String::new());
                }
                // Without a tree builder, the sink must switch the tokenizer into raw text.
                "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
                "style" => return TokenSinkResult::RawData(RawKind::Rawtext),
                _ => {}
            }
        }
        TokenSinkResult::Continue
    }
}

fn html5ever_links(html: &[u8]) -> usize {
    let tok = Tokenizer::new(Links::default(), TokenizerOpts::default());
    let queue = BufferQueue::default();
    for chunk in html.chunks(16 * 1024) {
        // A chunk may cut a UTF-8 sequence; the test page is ASCII, so this stays fair.
        queue.push_back(StrTendril::from_slice(&String::from_utf8_lossy(chunk)));
        let _ = tok.feed(&queue);
    }
    tok.end();
    tok.sink.links.borrow().len()
}

fn bench(c: &mut Criterion) {
    let html = page();
    let lol = mapwright_crawl::crawl::parse::extract(html.as_bytes(), false);
    let h5 = html5ever_links(html.as_bytes());
    assert_eq!(lol.links.len(), 400, "lol_html found {}", lol.links.len());
    assert_eq!(h5, 400 + 4, "html5ever found {h5}"); // + canonical, stylesheet, alternate, robots
    let mut g = c.benchmark_group("extract_links");
    g.throughput(Throughput::Bytes(html.len() as u64));
    g.bench_function("lol_html", |b| {
        b.iter(|| mapwright_crawl::crawl::parse::extract(black_box(html.as_bytes()), false))
    });
    g.bench_function("html5ever_tokenizer", |b| b.iter(|| html5ever_links(black_box(html.as_bytes()))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
