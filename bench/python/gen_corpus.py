#!/usr/bin/env python3
"""Deterministic sitemap corpus for the Python benchmark (bench.py): no network, no file from
outside the repository. The large files are those of the team's shared generator
(shared/bench/gen_corpus.py, copied here so that anyone with a clone can reproduce the
package README's figures); small/ is added: 24 urlsets of 1 to 259 URLs (685 in all), the
sizes of the real files of shared/realworld, each written the way a common generator writes
its files (one line, indented, CRLF, a stylesheet, hreflang alternates, images, video with
CDATA, no XML declaration...), so the per-file costs the README reports can be measured on
files a reader makes.

Writes (default --out /tmp/sitemap-bench):
  s50k.xml            one <urlset>, 50,000 <url> (loc, lastmod, changefreq, priority)
  s50k.xml.gz         the same bytes, gzipped (level 6, mtime 0: byte-identical across runs)
  big/sitemap_index.xml  index of 20 children, 50,000 URLs each (1,000,000 URLs)
  big/sitemap-01.xml.gz .. sitemap-20.xml.gz   (sitemap-01 == s50k.xml, gzipped)
  s50k-ext.xml        50,000 <url>, each with 2 <image:image> and 2 <xhtml:link> hreflang
  tiny.xml            the first <url> only (for start-up / fixed-cost runs)
  small/*.xml         24 small urlsets in the shapes of common generators (small/MANIFEST.json)
  MANIFEST.json       sizes, URL counts and sha256 of every file

The index's <loc> values point at --base-url (default http://127.0.0.1:8765),
so URL-fetching peers can read the corpus through a loopback HTTP server
serving --out; local readers resolve a child by its file name next to the index.

Only the standard library is used.  Same arguments => same bytes.
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import sys
from urllib.parse import quote

CORPUS_VERSION = 1
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS_IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
NS_XHTML = "http://www.w3.org/1999/xhtml"
PER_FILE = 50_000
N_CHILDREN = 20

WORDS = (
    "blue red green black white large small classic modern vintage premium "
    "cotton leather steel wooden organic wireless portable compact deluxe "
    "shirt jacket table chair lamp kettle speaker headphones backpack bottle "
    "sofa desk mug sneaker watch camera charger blanket pillow rug"
).split()
# Non-ASCII path segments, percent-encoded as UTF-8 (the protocol's rule).
NON_ASCII = ["über-größe", "café-crème", "niño-pequeño", "żółw-łódź",
             "商品-特価", "カテゴリー", "одежда-новинки", "μπλε-παπούτσια"]
CHANGEFREQ = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
CF_WEIGHTS = [1, 3, 20, 35, 25, 10, 6]


def lastmod(rng):
    y = rng.randint(2015, 2025)
    mo = rng.randint(1, 12)
    d = rng.randint(1, 28)
    r = rng.random()
    if r < 0.40:                                   # date only
        return f"{y:04d}-{mo:02d}-{d:02d}"
    hh, mm, ss = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    if r < 0.75:                                   # full datetime, numeric offset
        return f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}+00:00"
    if r < 0.90:                                   # Zulu
        return f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}Z"
    off = rng.choice(["+02:00", "-05:00", "+05:30", "+09:00", "-08:00"])
    ms = rng.randint(0, 999)                       # fractional seconds
    return f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{ms:03d}{off}"


def page_path(rng, i):
    """Path + query of URL number i, already percent-encoded, NOT yet entity-escaped."""
    cat = rng.randint(1, 250)
    if rng.random() < 0.08:
        seg = quote(rng.choice(NON_ASCII), safe="-")
        return f"/kategorie-{cat}/{seg}-{i}?id={i}&ref=x"
    name = "-".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    return f"/category-{cat}/{name}-{i}?id={i}&ref=x"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def url_entries(part, ext=False):
    """Yield the text of the 50,000 <url> entries of child `part` (0-based)."""
    rng = random.Random(1000 + part + (500 if ext else 0))
    base = part * PER_FILE
    for k in range(PER_FILE):
        i = base + k
        path = page_path(rng, i)
        loc = esc("https://www.example.com" + path)
        cf = rng.choices(CHANGEFREQ, CF_WEIGHTS)[0]
        prio = f"{rng.randint(1, 10) / 10:.1f}"
        s = (f"<url>\n  <loc>{loc}</loc>\n  <lastmod>{lastmod(rng)}</lastmod>\n"
             f"  <changefreq>{cf}</changefreq>\n  <priority>{prio}</priority>\n")
        if ext:
            s += (f"  <image:image>\n    <image:loc>https://cdn.example.com/img/{i}/main.jpg</image:loc>\n"
                  f"  </image:image>\n"
                  f"  <image:image>\n    <image:loc>https://cdn.example.com/img/{i}/alt-1.jpg</image:loc>\n"
                  f"    <image:caption>Product {i} &amp; accessories</image:caption>\n"
                  f"  </image:image>\n"
                  f"  <xhtml:link rel=\"alternate\" hreflang=\"en\" href=\"{esc('https://www.example.com/en' + path)}\"/>\n"
                  f"  <xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"{esc('https://www.example.com/de' + path)}\"/>\n")
        s += "</url>\n"
        yield s


def urlset_bytes(part, ext=False):
    ns = f'xmlns="{NS}"'
    if ext:
        ns += f'\n        xmlns:image="{NS_IMAGE}"\n        xmlns:xhtml="{NS_XHTML}"'
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {ns}>\n'
    return (head + "".join(url_entries(part, ext)) + "</urlset>\n").encode("utf-8")


def gz(data):
    # mtime=0 and no file name in the header: reproducible bytes.
    return gzip.compress(data, compresslevel=6, mtime=0)


def write(path, data, manifest, urls, root, xml_bytes=None):
    with open(path, "wb") as f:
        f.write(data)
    manifest[os.path.relpath(path, root)] = {
        "bytes": len(data), "xml_bytes": len(data) if xml_bytes is None else xml_bytes,
        "urls": urls, "sha256": hashlib.sha256(data).hexdigest()}


# The small files: (name, URLs, shape). The URL counts are those of shared/realworld's 24
# urlsets; the shapes are what their generators write.
SMALL = [
    ("astro", 81, "oneline"), ("docusaurus", 34, "oneline"), ("gatsby", 43, "oneline-full"),
    ("crlf", 4, "crlf"), ("hugo-i18n", 16, "hreflang"), ("hugo", 47, "indent"),
    ("jekyll-liquid", 14, "blank-lines"), ("jekyll", 11, "indent"), ("laravel-a", 1, "hreflang"),
    ("laravel-b", 1, "stylesheet"), ("lume", 10, "indent-ms"), ("mkdocs", 6, "indent"),
    ("mystmd", 259, "stylesheet"), ("next-i18n", 15, "indent"), ("next", 59, "indent-full"),
    ("nuxt", 6, "hreflang"), ("sitemapjs-video", 7, "video"), ("google-video", 1, "video"),
    ("sphinx-old", 10, "nodecl"), ("sphinx", 24, "single-quotes"), ("vuepress", 18, "oneline"),
    ("wordpress", 14, "stylesheet"), ("rankmath", 1, "images"), ("xml-sitemaps", 3, "indent-full"),
]


def small_urlset(name, n, shape):
    rng = random.Random(name)
    ns = f'xmlns="{NS}"'
    if shape in ("hreflang", "images", "video"):
        ns += f' xmlns:xhtml="{NS_XHTML}" xmlns:image="{NS_IMAGE}" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    entries = []
    for i in range(n):
        loc = f"https://{name}.example.org/{'-'.join(rng.choice(WORDS) for _ in range(2))}/{i}/"
        parts = [f"<loc>{loc}</loc>"]
        if shape not in ("oneline",):
            parts.append(f"<lastmod>{lastmod(rng)}</lastmod>")
        if shape.endswith("full"):
            parts.append(f"<changefreq>{rng.choice(CHANGEFREQ)}</changefreq><priority>0.{rng.randint(1, 9)}</priority>")
        if shape == "hreflang":
            for lang in ("en", "de", "x-default"):
                parts.append(f'<xhtml:link rel="alternate" hreflang="{lang}" href="{loc}?hl={lang}"/>')
        if shape == "images":
            for k in range(3):
                parts.append(f"<image:image><image:loc>{loc}img-{k}.jpg</image:loc></image:image>")
        if shape == "video":
            parts.append(f"<video:video><video:thumbnail_loc>{loc}t.jpg</video:thumbnail_loc>"
                         f"<video:title><![CDATA[ Video {i} ]]></video:title>"
                         f"<video:description><![CDATA[\n  About {i} & more\n]]></video:description>"
                         f"<video:content_loc>\n    {loc}v.mp4</video:content_loc></video:video>")
        if shape.startswith("oneline") or shape in ("nodecl", "single-quotes"):
            entries.append("<url>" + "".join(parts) + "</url>")
        else:
            entries.append("  <url>\n" + "".join(f"    {p}\n" for p in parts) + "  </url>\n" + ("  \n  \n" if shape == "blank-lines" else ""))
    decl = {"nodecl": "", "single-quotes": "<?xml version='1.0' encoding='utf-8'?>"}.get(shape, '<?xml version="1.0" encoding="UTF-8"?>\n')
    if shape == "stylesheet":
        decl += '<?xml-stylesheet type="text/xsl" href="/sitemap.xsl" ?>\n'
    sep = "" if shape.startswith("oneline") or shape in ("nodecl", "single-quotes") else "\n"
    text = f"{decl}<urlset {ns}>{sep}{''.join(entries)}</urlset>{sep}"
    if shape == "crlf":
        text = text.replace("\n", "\r\n")
    return text.encode("utf-8")


def write_small(root):
    """small/: the 24 small urlsets and their MANIFEST.json (file, URLs)."""
    os.makedirs(os.path.join(root, "small"), exist_ok=True)
    manifest = []
    for name, n, shape in SMALL:
        with open(os.path.join(root, "small", f"{name}.xml"), "wb") as f:
            f.write(small_urlset(name, n, shape))
        manifest.append({"file": f"{name}.xml", "url_count": n, "shape": shape})
    with open(os.path.join(root, "small", "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/sitemap-bench")
    ap.add_argument("--base-url", default="http://127.0.0.1:8765",
                    help="URL the corpus directory is served at (used in the index <loc>s)")
    ap.add_argument("--force", action="store_true", help="regenerate even if MANIFEST.json matches")
    a = ap.parse_args()
    root = a.out
    mpath = os.path.join(root, "MANIFEST.json")
    gen_sha = hashlib.sha256(open(__file__, "rb").read()).hexdigest()
    if not a.force and os.path.exists(mpath):
        try:
            m = json.load(open(mpath))
            if m.get("generator_sha256") == gen_sha and m.get("base_url") == a.base_url and all(
                    os.path.getsize(os.path.join(root, p)) == v["bytes"] for p, v in m["files"].items()):
                write_small(root)
                print(f"corpus up to date in {root}")
                return
        except (OSError, ValueError, KeyError):
            pass
    os.makedirs(os.path.join(root, "big"), exist_ok=True)
    files = {}
    base = a.base_url.rstrip("/")

    s50k = None
    for part in range(N_CHILDREN):
        data = urlset_bytes(part)
        if part == 0:
            s50k = data
        write(os.path.join(root, "big", f"sitemap-{part + 1:02d}.xml.gz"), gz(data), files, PER_FILE, root,
              xml_bytes=len(data))
        print(f"  big/sitemap-{part + 1:02d}.xml.gz  ({len(data) / 1e6:.1f} MB uncompressed)", file=sys.stderr)
    write(os.path.join(root, "s50k.xml"), s50k, files, PER_FILE, root)
    write(os.path.join(root, "s50k.xml.gz"), gz(s50k), files, PER_FILE, root, xml_bytes=len(s50k))

    idx = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<sitemapindex xmlns="{NS}">\n']
    for part in range(N_CHILDREN):
        idx.append(f"  <sitemap>\n    <loc>{base}/big/sitemap-{part + 1:02d}.xml.gz</loc>\n"
                   f"    <lastmod>2025-01-{part + 1:02d}T00:00:00+00:00</lastmod>\n  </sitemap>\n")
    idx.append("</sitemapindex>\n")
    write(os.path.join(root, "big", "sitemap_index.xml"), "".join(idx).encode(), files,
          N_CHILDREN * PER_FILE, root)

    write(os.path.join(root, "s50k-ext.xml"), urlset_bytes(0, ext=True), files, PER_FILE, root)

    # One URL: a run on it shows a peer's fixed cost (start-up, imports, HTTP client set-up).
    tiny = urlset_bytes(0).split(b"</url>\n", 1)[0] + b"</url>\n</urlset>\n"
    write(os.path.join(root, "tiny.xml"), tiny, files, 1, root)

    write_small(root)
    with open(mpath, "w") as f:
        json.dump({"version": CORPUS_VERSION, "generator_sha256": gen_sha, "base_url": a.base_url, "files": files}, f, indent=1)
    for p, v in sorted(files.items()):
        print(f"{p:28s} {v['bytes'] / 1e6:8.2f} MB  {v['urls']:>9,} URLs")


if __name__ == "__main__":
    main()
