// Driver of the peer: sitemap-generator (npm) crawling URL into OUT/sitemap.xml with the same
// concurrency as mapwright and no pause between requests (its crawler, simplecrawler, waits
// 250 ms between requests by default; that would measure the pause, not the crawler).
// Prints urls=N (the URLs it added) when done.
const SitemapGenerator = require('sitemap-generator');
const [url, out, concurrency] = process.argv.slice(2);
const gen = SitemapGenerator(url, { filepath: out + '/sitemap.xml', maxEntriesPerFile: 50000, stripQuerystring: true });
const crawler = gen.getCrawler();
crawler.maxConcurrency = Number(concurrency || 8);
crawler.interval = 0;
let added = 0, errors = 0;
gen.on('add', () => { added += 1; });
gen.on('error', () => { errors += 1; });
gen.on('done', () => { console.log(`urls=${added} errors=${errors}`); });
gen.start();
