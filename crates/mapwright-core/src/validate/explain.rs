//! The long explanation of every rule (`mapwright validate --explain RULE`): what it checks,
//! why it matters, how to fix it. A flat table, one arm per rule.

use crate::rule::Rule;

/// What `--explain` prints about a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// What the rule checks.
    pub checks: &'static str,
    /// Why it matters (what a consumer does with such a file).
    pub why: &'static str,
    /// How to fix it.
    pub fix: &'static str,
}

const fn x(checks: &'static str, why: &'static str, fix: &'static str) -> Explanation {
    Explanation { checks, why, fix }
}

/// The explanation of `rule`. Every rule of the catalogue has one (a test checks it).
pub fn explain(rule: Rule) -> Explanation {
    match rule {
        Rule::XmlMalformed => x(
            "The file is well-formed XML: one root element, every tag closed, '&' and '<' escaped in values, only the five XML entities.",
            "An XML parser stops at the first fault; strict consumers reject the whole file, lenient ones lose what follows the fault.",
            "Escape '&' as &amp; and '<' as &lt;, replace HTML entities (&nbsp;, &eacute;) by the character itself, keep one root element, and close every tag. Generate the file with an XML library rather than string templates.",
        ),
        Rule::Encoding => x(
            "The file is UTF-8: no invalid byte sequences, and no XML declaration naming another encoding.",
            "The protocol requires UTF-8; consumers that trust it read other encodings as garbage URLs.",
            "Save the file as UTF-8 and write <?xml version=\"1.0\" encoding=\"UTF-8\"?>.",
        ),
        Rule::UnknownRoot => x(
            "The document is a sitemap: its root element is <urlset> or <sitemapindex> (or an RSS or Atom feed), or it is a plain-text list of URLs.",
            "A consumer that fetches an HTML page or another XML document where a sitemap should be finds no URLs at all; often the server answers a missing sitemap with an HTML error page.",
            "Make sure the URL serves the sitemap itself, and that its root element is <urlset> (pages) or <sitemapindex> (an index of sitemaps).",
        ),
        Rule::Namespace => x(
            "The root element declares the sitemap namespace http://www.sitemaps.org/schemas/sitemap/0.9.",
            "Without it, a namespace-aware consumer does not recognise any element as a sitemap element and reads nothing.",
            "Write <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"> (or <sitemapindex xmlns=...>).",
        ),
        Rule::LegacyNamespace => x(
            "The root uses Google's 0.84 namespace (http://www.google.com/schemas/sitemap/0.84) of 2005.",
            "It is still read, but it is outdated: other engines and tools expect the sitemaps.org 0.9 namespace.",
            "Replace the namespace with http://www.sitemaps.org/schemas/sitemap/0.9; nothing else needs to change.",
        ),
        Rule::LocMissing => x(
            "Every <url> and <sitemap> has a non-empty <loc>.",
            "An entry without a location is useless: consumers drop it, and the XSD rejects the file.",
            "Give the entry its absolute URL in <loc>, or remove the entry.",
        ),
        Rule::LocDuplicateTag => x(
            "An entry has at most one <loc>, one <lastmod>, one <changefreq> and one <priority>.",
            "With two values a consumer has to guess which one is meant (most keep the first); the XSD rejects the file.",
            "Keep one of each element per entry; if two URLs are meant, write two <url> elements.",
        ),
        Rule::LocNotAbsolute => x(
            "<loc> is an absolute URL with a scheme and a host.",
            "Consumers do not resolve relative URLs in a sitemap: the entry is dropped.",
            "Write the full URL, scheme included: https://example.com/page rather than /page.",
        ),
        Rule::LocScheme => x(
            "<loc> uses the http or https scheme.",
            "Crawlers only fetch web pages; ftp:, mailto: or javascript: URLs are dropped.",
            "List only http(s) URLs; remove the others.",
        ),
        Rule::LocTooLong => x(
            "<loc> is shorter than 2,048 characters.",
            "The protocol's limit: longer URLs are dropped by consumers and rejected by the XSD.",
            "Shorten the URL (move state out of the query string) or leave the page out of the sitemap.",
        ),
        Rule::LocInvalid => x(
            "<loc> parses as a URL: a valid host, no control characters, no unescaped spaces in the host.",
            "A URL that does not parse cannot be fetched: the entry is dropped.",
            "Fix the host name and percent-encode characters that are not allowed in URLs.",
        ),
        Rule::LocNotEscaped => x(
            "<loc> is percent-encoded: no spaces, no non-ASCII characters written as such.",
            "The protocol asks for URLs escaped as the server expects; consumers escape them their own way, which may not match the server.",
            "Percent-encode the UTF-8 bytes: https://example.com/%C3%BCber rather than https://example.com/über, %20 for a space.",
        ),
        Rule::LocWhitespace => x(
            "<loc> has no whitespace (spaces, tabs, newlines) around the URL.",
            "Most consumers trim it, but some take the whitespace as part of the URL and fetch a URL that does not exist.",
            "Write <loc>https://example.com/</loc> with nothing around the URL.",
        ),
        Rule::LocOutOfScope => x(
            "With the sitemap's own URL known (--url), every <loc> has the sitemap's scheme, host and port, and a path under the sitemap's folder (PROTOCOL.md section 5).",
            "Consumers drop URLs a sitemap is not entitled to list: a sitemap at /catalog/sitemap.xml may list only /catalog/... URLs of its own host; http and https, www and the bare domain, and each port are different sites.",
            "Move the sitemap to the site root (/sitemap.xml covers the whole host), list the URL in a sitemap of its own site, or make the other host's robots.txt cross-submit this sitemap with a Sitemap: line.",
        ),
        Rule::LastmodFormat => x(
            "<lastmod> is in W3C Datetime: YYYY, YYYY-MM, YYYY-MM-DD, or YYYY-MM-DDThh:mm[:ss[.s]]TZD with TZD Z or +hh:mm.",
            "Consumers ignore a date they cannot read, and with it the hint to recrawl the page.",
            "Write e.g. 2005-01-01 or 2005-01-01T12:00:00+00:00; not '2005-01-01 12:00', not an RFC 822 date, not a time without a zone.",
        ),
        Rule::LastmodPrecision => x(
            "<lastmod> uses a W3C Datetime form that the official XSD rejects: year only, year-month, or minutes without seconds.",
            "The protocol allows these forms and engines accept them, but xmllint --schema and other schema validators fail the file.",
            "Write a full date (2005-01-01) or a time with seconds (2005-01-01T12:00:00Z) to pass both.",
        ),
        Rule::LastmodFuture => x(
            "<lastmod> is not later than now (with 15 minutes for clock skew, and 14 hours more for dates without a zone).",
            "A modification date in the future is impossible; consumers learn to distrust the lastmod values of such a sitemap and fall back to their own schedule.",
            "Write when the page last changed, not when it is planned to change or when the sitemap was generated; check the generator's clock and time zone.",
        ),
        Rule::ChangefreqValue => x(
            "<changefreq> is one of always, hourly, daily, weekly, monthly, yearly, never, in lower case.",
            "Any other value is ignored by consumers and rejected by the XSD.",
            "Use one of the seven values exactly as written here (Daily -> daily).",
        ),
        Rule::PriorityRange => x(
            "<priority> is a decimal number from 0.0 to 1.0 written with a point.",
            "A value out of range, a comma as decimal separator or a percentage is ignored by consumers and rejected by the XSD.",
            "Write 0.8, not 0,8, 80% or 8.",
        ),
        Rule::PriorityUniform => x(
            "The URLs of a file (more than a handful) do not all have the same priority.",
            "Priority only ranks a site's URLs against each other; giving all of them the same value (often 1.0) says nothing and wastes bytes.",
            "Give higher values to the pages that matter most, or drop <priority> altogether (the default is 0.5).",
        ),
        Rule::UnknownElement => x(
            "Every element in the sitemap namespace is one the schema defines (urlset, url, loc, lastmod, changefreq, priority, sitemapindex, sitemap).",
            "Unknown elements are ignored by consumers and make the XSD reject the file; often they are misspellings (<lastmodified>) or extensions written without their own namespace.",
            "Fix the element name, or put extension elements in their own namespace (image:, video:, news:, xhtml:).",
        ),
        Rule::TooManyUrls => x(
            "One file lists at most 50,000 entries (URLs, or child sitemaps in an index).",
            "Consumers ignore what comes after the limit, or reject the whole file.",
            "Split the URLs over several sitemaps and list them in a sitemap index (mapwright's generator splits automatically).",
        ),
        Rule::TooLarge => x(
            "The file is at most 52,428,800 bytes (50 MiB) uncompressed, gzipped or not.",
            "Consumers stop reading at the limit: the rest of the file is lost.",
            "Split the file into several sitemaps listed in an index; gzip does not help, the limit is on the uncompressed size.",
        ),
        Rule::DuplicateUrl => x(
            "Each <loc> is listed once in a file (compared after URL normalisation).",
            "Repeats waste the 50,000-entry budget and, with different lastmod or priority values, leave the consumer to guess which one holds.",
            "Remove the repeated entries; keep the one with the right lastmod.",
        ),
        Rule::EmptySitemap => x(
            "The file lists at least one entry.",
            "An empty sitemap tells consumers nothing and the XSD rejects an empty <urlset>; it often means the generator failed silently.",
            "Check the generator's configuration, or do not publish the file (and remove it from the index and robots.txt).",
        ),
        Rule::IndexNested => x(
            "A sitemap index lists sitemaps, not other indexes (known with --follow).",
            "Google and other engines do not follow an index listed in an index: the URLs below it are never read.",
            "List the nested index's children directly in the top index (up to 50,000 per index).",
        ),
        Rule::IndexCrossSite => x(
            "With the index's own URL known (--url), every child sitemap is on the same scheme, host and port.",
            "An index may only list sitemaps of its own site; consumers ignore the others.",
            "Host the child sitemaps on the index's site, or submit the other site's sitemaps through that site's own robots.txt.",
        ),
        Rule::TextInvalidLine => x(
            "Every line of a plain-text sitemap is one absolute http(s) URL and nothing else.",
            "Text sitemaps have no comments, headers or markup: any other line is dropped (or, worse, fetched as a URL).",
            "Write one full URL per line; remove comments, blank-padded lines and HTML.",
        ),
        Rule::GzipCorrupt => x(
            "A gzipped sitemap decompresses to its end.",
            "A truncated or damaged gzip stream loses everything after the fault, often the whole file.",
            "Compress the file again (gzip -9 sitemap.xml) and check the upload was complete; do not gzip twice.",
        ),
        Rule::Bom => x(
            "The file does not start with a UTF-8 byte order mark.",
            "The BOM is legal but some consumers take the file for not-XML when bytes precede <?xml.",
            "Save the file as UTF-8 without BOM.",
        ),
        Rule::RobotsDisallowed => x(
            "With live checks, no listed URL is disallowed by its site's robots.txt.",
            "A crawler that obeys robots.txt will not fetch the URL: listing it is contradictory and the page is not indexed.",
            "Remove the URL from the sitemap, or allow it in robots.txt.",
        ),
        Rule::UrlStatus => x(
            "With live checks, every listed URL answers 200: not 404/410, not 5xx, not a redirect.",
            "Consumers waste crawl budget on broken or moved URLs and trust the sitemap less.",
            "List the final URL of each page (after redirects), and remove pages that are gone.",
        ),
        Rule::UrlNoindex => x(
            "With live checks, no listed URL carries noindex (meta robots or X-Robots-Tag).",
            "A sitemap asks for indexing, noindex forbids it: the page is fetched and then dropped.",
            "Remove the URL from the sitemap, or remove noindex from the page.",
        ),
        Rule::EmptyFile => x(
            "The file (or the response body) holds something: not zero bytes, not only white space, also after gzip is removed.",
            "A consumer that reads an empty file finds no URLs and often says nothing: the sitemap silently counts for nothing. An empty answer usually means a failed upload, a generator that crashed, or a server that answers 200 with no body.",
            "Publish the sitemap again and check the upload completed (its size, `gzip -t`), or remove the file and its Sitemap: line in robots.txt.",
        ),
        Rule::ScopeVouched => x(
            "Tells, once per sitemap, that the folder rule of the protocol is waived: the sitemap is named in the robots.txt of an origin (directly, or through an index at any depth), or a verified owner of that origin vouches for it, so it may list any URL of that origin, whatever folder the file sits in.",
            "Whoever writes robots.txt (or proves ownership) controls the whole host, so consumers such as search engines accept such a sitemap's URLs outside its folder; without a voucher the same URLs would be loc-out-of-scope. Cross-submission works the same way: a sitemap hosted elsewhere but named in host A's robots.txt may list A's URLs, and only those.",
            "Nothing to fix. To have the same verdict without the voucher, move the sitemap to the site's root folder. For a local file, `--vouched` says that its host's robots.txt names it (`--vouched=ORIGIN` for another origin's robots.txt).",
        ),
        Rule::OaiError => x(
            "An OAI-PMH repository given where a sitemap is expected answers ListRecords (metadataPrefix=oai_dc) with records, not with an <error>. Every code of OAI-PMH 2.0 is named: noRecordsMatch (no records at all), badResumptionToken (a page of the list refused), cannotDisseminateFormat (no Dublin Core), badVerb and badArgument (where records were asked for), idDoesNotExist, noMetadataFormats, noSetHierarchy.",
            "Read as Google Sitemaps read repositories, each record's http(s) dc:identifier is one URL; an error answer gives no URL, or stops the list where it happened, so the URLs after it are unknown to consumers.",
            "Check the base URL (it answers ?verb=Identify), that the repository offers oai_dc (?verb=ListMetadataFormats) and holds records; for badResumptionToken, make tokens live longer than a harvest takes (minutes, not seconds).",
        ),
        Rule::OaiIncomplete => x(
            "The records of an OAI-PMH repository are read to the end of the list: every resumptionToken is followed (each page asked with verb=ListRecords and the token) until a page has no token or an empty one.",
            "What the pages after the stop hold is unknown: consumers that stop there miss those URLs, so the read is a failed one. The same limits as for one sitemap apply to all the pages together (52,428,800 bytes, the time limit of one fetch), the pages are counted (1,000 at most) and spaced (0.2 s), and a token already followed ends the list, so a repository cannot make a harvest endless.",
            "If a page failed, read it again later (the repository may have been busy: it should answer 503 with Retry-After). A token that repeats is a repository fault. A large repository is better listed in a sitemap index of sitemaps; a local OAI-PMH page cannot ask for the next one: give the repository's base URL.",
        ),
        Rule::OaiNoUrl => x(
            "Every OAI-PMH record has a dc:identifier that is an http(s) URL (the record's landing page).",
            "The record's URL is what consumers crawl; a record identified only by a DOI, a handle, an ISBN or its oai: identifier gives none, and is skipped.",
            "Add the landing page's URL as a dc:identifier of the record (https://doi.org/10.1234/x form for a DOI also works).",
        ),
        Rule::OaiDeleted => x(
            "Tells that an OAI-PMH record's header says status=\"deleted\".",
            "A deleted record has no metadata and no page any more: it is skipped, as consumers skip it.",
            "Nothing to fix.",
        ),
        Rule::NoUsableUrl => x(
            "A sitemap (or an OAI-PMH repository) gives at least one URL: of the entries it lists, some have a usable http(s) URL.",
            "Every entry was skipped, each for a reason that alone is only a warning (an OAI-PMH record identified by a DOI or a handle only): consumers get nothing from the file, and `read` and `discover` fail on it. A file whose skipped entries are errors (a text sitemap of invalid lines, a <url> without <loc>) is already invalid by those findings.",
            "Give the entries a usable URL: for OAI-PMH records, an http(s) dc:identifier (the landing page) on each record.",
        ),
    }
}
