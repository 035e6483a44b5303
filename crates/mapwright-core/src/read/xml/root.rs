//! The root element, read once before the entry loop: what comes before it (a misplaced XML
//! declaration, text), which format its name says (urlset, sitemap index, RSS, RDF, Atom,
//! OAI-PMH; an HTML page or anything else is not a sitemap), its namespace with the finding a
//! wrong or missing one gets, and a lone `<url>` or `<sitemap>` root read as its own entry.

use quick_xml::events::{BytesStart, Event};

use super::ns::{Ns, split_name};
use super::{Role, XmlReader, attributes};
use crate::error::Error;
use crate::model::Format;
use crate::read::text::shorten;
use crate::rule::{Finding, Position, Rule};
use crate::{NS_GOOGLE_084, NS_OAI_PMH, NS_SITEMAP};

impl XmlReader<'_> {
    /// Reads up to and including the root element, deciding the format.
    pub(super) fn read_root(&mut self, findings: &mut Vec<Finding>) -> Result<(), Error> {
        let XmlReader { xr, buf, st } = self;
        // Whether a comment, processing instruction or DOCTYPE came before (for the message).
        let mut markup = false;
        loop {
            buf.clear();
            let off = xr.buffer_position();
            let ev = match xr.read_event_into(buf) {
                Ok(ev) => ev,
                Err(e) => return Err(Self::map_err(xr, st.origin, e)),
            };
            let (e, empty) = match ev {
                Event::Decl(_) => {
                    // Stream offset 0 is the first byte after a byte order mark.
                    if st.origin + off > 0 {
                        let what = if markup { "other content" } else { "whitespace" };
                        findings.push(declaration_misplaced(Self::pos_at(xr, st.origin, off), what));
                    }
                    continue;
                }
                Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {
                    markup = true;
                    continue;
                }
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::Eof => {
                    return Err(Error::NotSitemap {
                        position: Self::pos_at(xr, st.origin, off),
                        reason: "no root element".into(),
                    });
                }
                Event::Text(t) if !t.trim().is_empty() => {
                    return Err(Error::Xml {
                        position: Self::pos_at(xr, st.origin, off),
                        message: "text before the root element".into(),
                    });
                }
                _ => continue,
            };
            let name = e.name().0;
            let (prefix, local) = split_name(name);
            st.ns.push(&e, 1);
            let uri = root_namespace(&e, prefix);
            let pos = Self::pos_at(xr, st.origin, off);
            // A lone <url> or <sitemap> as the root: read as a urlset or index of one entry.
            let lone = match local {
                "url" => Some(Role::Url),
                "sitemap" => Some(Role::Sitemap),
                _ => None,
            };
            st.format = match local {
                "urlset" | "url" => Format::Urlset,
                "sitemapindex" | "sitemap" => Format::SitemapIndex,
                "rss" | "RDF" => Format::Rss,
                "feed" => Format::Atom,
                "OAI-PMH" if uri == NS_OAI_PMH => Format::OaiPmh,
                "html" | "HTML" => {
                    return Err(Error::NotSitemap {
                        position: pos,
                        reason: "an HTML page (an error page?), not a sitemap".into(),
                    });
                }
                other => {
                    return Err(Error::NotSitemap {
                        position: pos,
                        reason: format!(
                            "root element <{}> is none of urlset, sitemapindex, rss, feed, OAI-PMH (in {NS_OAI_PMH})",
                            shorten(other)
                        ),
                    });
                }
            };
            if matches!(st.format, Format::Urlset | Format::SitemapIndex) {
                check_namespace(&uri, local, pos, findings);
                // A root in an unknown namespace (or an undeclared prefix): its children in that
                // namespace are read as sitemap elements, as lenient consumers read them, rather
                // than skipped in silence. The namespace finding above says so.
                if st.ns.resolve(prefix) != Ns::Sitemap {
                    st.ns.bindings.push((1, prefix.into(), Ns::Sitemap));
                }
            }
            st.namespace = uri;
            st.root_name = name.to_string();
            if st.format == Format::Atom {
                let [base] = attributes(&e, ["xml:base"]);
                st.atom.feed = base;
            }
            if let Some(role) = lone {
                let (what, wrapper) =
                    if role == Role::Url { ("a urlset", "urlset") } else { ("a sitemap index", "sitemapindex") };
                findings.push(Finding::new(
                    Rule::UnknownRoot,
                    Some(pos),
                    format!(
                        "the root element is a lone <{local}>: read as {what} of one entry; wrap it in <{wrapper} xmlns=\"{NS_SITEMAP}\">"
                    ),
                ));
                if empty {
                    findings.push(Finding::new(
                        Rule::LocMissing,
                        Some(pos),
                        format!("<{local}/> without <loc>: the entry is skipped"),
                    ));
                    st.root_closed = true;
                } else {
                    let role = st.begin_entry(xr, off, role);
                    st.roles.push(role);
                }
            } else if empty {
                st.root_closed = true;
            } else {
                st.roles.push(Role::Root);
            }
            st.after_tag = true;
            return Ok(());
        }
    }
}

/// `xml-malformed`: an XML declaration that is not the very first thing of the file (a byte
/// order mark aside), after `what`. Every strict XML parser rejects the file; we read on. The
/// one place this is decided, so `read` and `validate` give the same verdict on the same bytes.
pub(super) fn declaration_misplaced(position: Position, what: &str) -> Finding {
    Finding::new(
        Rule::XmlMalformed,
        Some(position),
        format!(
            "the XML declaration comes after {what}: it must be the very first thing in the file; remove what precedes <?xml"
        ),
    )
}

/// The namespace URI of the root element (its prefix's declaration, or the default one).
fn root_namespace(e: &BytesStart<'_>, prefix: &str) -> String {
    for a in e.attributes().with_checks(false).flatten() {
        let key = a.key.0;
        let matches = if prefix.is_empty() { key == "xmlns" } else { key.strip_prefix("xmlns:") == Some(prefix) };
        if matches {
            return a.value.trim().to_string();
        }
    }
    String::new()
}

fn check_namespace(uri: &str, local: &str, pos: Position, findings: &mut Vec<Finding>) {
    match uri {
        NS_SITEMAP => {}
        NS_GOOGLE_084 => findings.push(Finding::new(
            Rule::LegacyNamespace,
            Some(pos),
            format!("Google's 0.84 namespace is outdated: use xmlns=\"{NS_SITEMAP}\""),
        )),
        "" => findings.push(Finding::new(
            Rule::Namespace,
            Some(pos),
            format!("<{local}> has no namespace: add xmlns=\"{NS_SITEMAP}\""),
        )),
        other => findings.push(Finding::new(
            Rule::Namespace,
            Some(pos),
            format!(
                "wrong namespace {:?} on <{local}>: its elements were read as sitemap elements; use xmlns=\"{NS_SITEMAP}\"",
                shorten(other)
            ),
        )),
    }
}
