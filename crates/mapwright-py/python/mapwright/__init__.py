"""Read, validate, write and discover sitemaps with mapwright's Rust core.

Parsing runs in Rust without the GIL, streaming: memory stays flat however large the
file, and hostile input (gzip bombs, deep nesting, huge tokens) stops with an exception
that says where.

>>> import mapwright
>>> xml = b'''<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
...   <url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod></url>
... </urlset>'''
>>> [(e.loc, e.lastmod) for e in mapwright.read(xml)]
[('https://example.com/', datetime.date(2024, 5, 1))]
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Iterable, Literal, Optional, Protocol, Union, cast

if TYPE_CHECKING:
    import pandas  # type: ignore[import-untyped, unused-ignore]
    import polars

from ._mapwright import (
    Discovery,
    Entry,
    FetchError,
    Finding,
    GzipError,
    MalformedSitemapError,
    NoUrlError,
    NotASitemapError,
    PartialSitemapError,
    PartialSitemapWarning,
    Reader,
    Report,
    SitemapEncodingError,
    SitemapError,
    SitemapTooLargeError,
    WriteError,
    __version__,
)
from . import _mapwright

__all__ = [
    "read",
    "discover",
    "validate",
    "write",
    "to_pandas",
    "to_polars",
    "Entry",
    "Finding",
    "Reader",
    "Discovery",
    "Report",
    "SitemapError",
    "MalformedSitemapError",
    "SitemapEncodingError",
    "SitemapTooLargeError",
    "GzipError",
    "NotASitemapError",
    "NoUrlError",
    "FetchError",
    "WriteError",
    "PartialSitemapError",
    "PartialSitemapWarning",
    "Source",
    "Entries",
    "__version__",
]


class _BinaryReadable(Protocol):
    """A binary file object: what ``read(n)`` gives is ``bytes`` (``open(path, "rb")``,
    ``io.BytesIO``, a ``gzip.GzipFile``...)."""

    def read(self, size: int, /) -> bytes: ...


#: What :func:`read`, :func:`validate`, :func:`to_pandas` and :func:`to_polars` take: a
#: path, an http(s) URL (a ``str``), the bytes of a sitemap, or a binary file object.
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, _BinaryReadable]

#: What the frame builders take besides a :data:`Source`: entries already read.
Entries = Union[Reader, Discovery, Iterable[Entry]]

#: What a partial result does (an index one of whose children failed, a file that broke
#: after some entries): ``"raise"`` a :class:`PartialSitemapError` carrying what was read and
#: what failed, or ``"warn"`` (a :class:`PartialSitemapWarning`) and return what was read.
OnError = Literal["raise", "warn"]

#: What a data frame (and :func:`discover_many`) does with a partial result: as
#: :data:`OnError`, or ``"rows"``: no exception and no warning, each sitemap that failed is a
#: row with its ``sitemap`` and the cause in ``errors`` (all else missing), as advertools'
#: ``sitemap_to_df`` gives it. Nothing readable at all raises whatever this says.
FrameOnError = Literal["raise", "warn", "rows"]


def _is_url(s: str) -> bool:
    return s[:8].lower().startswith(("http://", "https://"))


def _kind(source: Any) -> tuple[str, Any]:
    """Which kind of source this is, for the Rust side: path, url, bytes or file."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "bytes", source
    if isinstance(source, str):
        return ("url" if _is_url(source) else "path"), source
    if isinstance(source, os.PathLike):
        return "path", os.fspath(source)
    if hasattr(source, "read"):
        return "file", source
    raise TypeError(
        "source must be a path, an http(s) URL, bytes or a binary file object, "
        f"not {type(source).__name__}"
    )


def read(
    source: Source,
    *,
    url: Optional[str] = None,
    strict: bool = False,
    max_bytes: Optional[int] = None,
    timeout: Optional[float] = None,
) -> Reader:
    """Iterate over the entries of one sitemap (urlset, index, text, RSS or Atom; gzip or not).

    ``source`` is a path, ``bytes``, a binary file object or an http(s) URL (an OAI-PMH
    repository's base URL too: its records' URLs, read across its pages). Entries come
    one at a time as :class:`Entry` objects; parsing runs on another thread without the
    GIL, a few thousand entries ahead, so memory does not grow with the file. The
    returned :class:`Reader`'s ``findings`` holds the diagnostics (rule, severity, line,
    column, message), all of them once it is exhausted.

    ``url`` is where the sitemap is served (for a URL source, its address after
    redirects); with ``strict=True`` entries outside its scope are dropped, each with a
    ``loc-out-of-scope`` finding, as search engines do. ``max_bytes`` limits the
    uncompressed size (default: the protocol's 50 MiB); ``timeout`` the seconds each HTTP
    request may take (default 120; a server that answers nothing raises ``FetchError`` then).
    From a URL a relative ``<loc>`` (``/page``) is read as the URL it names on the sitemap's
    site, with a ``loc-not-absolute`` finding (from a path or bytes, with ``url=``).

    A read that gives no entry at all (every entry skipped or out of scope, or none listed)
    raises :class:`NoUrlError` at its end, as the CLI's ``read`` exits 1 on it.
    A file that cannot be read to its end raises a :class:`SitemapError` subclass
    carrying ``line``, ``column`` and ``rule`` after the entries before the fault; a URL
    that answers with an error status or cannot be reached raises :class:`FetchError` at
    the call. The exception's ``url`` (and the start of its message) names a remote source.

    >>> r = mapwright.read(b"https://example.com/a\\nnot a url\\n")
    >>> [e.loc for e in r]
    ['https://example.com/a']
    >>> [(f.rule, f.line) for f in r.findings]
    [('text-invalid-line', 2)]
    """
    kind, value = _kind(source)
    return _mapwright.open_reader(kind, value, url=url, strict=strict, max_bytes=max_bytes, timeout=timeout)


# Alike on purpose: discover_many() below repeats these keyword arguments, the public signature of
# each (help(), the .pyi stubs, editors); _options() turns both into the one dict the Rust side
# reads.
def discover(
    site_or_sitemap_url: str,
    *,
    mode: str = "auto",
    per_host: Optional[int] = None,
    max_depth: Optional[int] = None,
    max_sitemaps: Optional[int] = None,
    max_urls: Optional[int] = None,
    max_bytes: Optional[int] = None,
    scope: bool = True,
    cross_submission: bool = True,
    timeout: Optional[float] = None,
    errors: OnError = "raise",
) -> Discovery:
    """Every URL of a site's sitemaps, deduplicated, each with the sitemap it came from.

    Given a site (``https://example.com/``), its robots.txt names the sitemaps (else the
    usual paths are tried); given a robots.txt (``https://example.com/robots.txt``, or
    ``mode="robots"``), the sitemaps its ``Sitemap:`` lines name, and only those; given a
    sitemap (a URL whose last segment says ``sitemap`` or ends in ``.xml``, ``.gz``,
    ``.txt``; or ``mode="sitemap"``), that one is read, and an index's children are followed. Sitemaps are fetched concurrently (``per_host`` at a
    time per host), with the fetch crate's timeouts and limits.

    The returned :class:`Discovery` yields :class:`Entry` objects whose ``sitemap`` is
    their sitemap's URL; once exhausted, ``summary`` gives the totals (``fetched``,
    ``urls``, ``duplicates``, ``out_of_scope``, ``failed``...) and the verdict of the CLI's
    ``discover --sites --summary`` (``ok``, ``ended``, ``error``, ``robots``: how robots.txt
    answered, ``robots_note``: what that meant), and ``sitemaps`` one dict
    per sitemap. ``scope=False`` keeps URLs outside their sitemap's scope and follows an
    index's children on any host. Each entry's ``loc`` is the URL as the sitemap wrote it
    (``loc_normalized`` its normal form, by which URLs are deduplicated).

    Failures raise, once the URLs read are yielded, as ``mapwright discover --sites`` judges
    a site (and :func:`discover_many` too): when nothing could be read (the sitemap
    answers 404, is an HTML page, a broken gzip, too large; no sitemap at the site) the
    :class:`SitemapError` subclass of the cause (``FetchError``, ``NotASitemapError``,
    ``GzipError``, ``SitemapTooLargeError``...) naming the URL; when sitemaps were read but
    gave no URL (every URL out of scope, every entry skipped, none listed) a
    :class:`NoUrlError` saying which; when some sitemaps were read
    and others not (an index's child failed), a :class:`PartialSitemapError` whose ``failed``
    lists ``(url, why)``, or with ``errors="warn"`` a :class:`PartialSitemapWarning` (and
    ``summary["failed"]`` lists them).

    >>> d = mapwright.discover("https://example.com/")       # doctest: +SKIP
    >>> urls = [(e.loc, e.sitemap) for e in d]                # doctest: +SKIP
    >>> d.summary["urls"]                                     # doctest: +SKIP
    1234
    """
    if errors not in ("raise", "warn"):
        raise ValueError(f"errors must be 'raise' or 'warn', not {errors!r}")
    options = _options(per_host, max_depth, max_sitemaps, max_urls, max_bytes, scope, cross_submission, timeout, errors)
    return _mapwright.start_discovery(site_or_sitemap_url, options, mode=mode)


# The same keywords as discover() and discover_many() (see there): the one place they become
# the options dict.
def _options(
    per_host: Optional[int] = None,
    max_depth: Optional[int] = None,
    max_sitemaps: Optional[int] = None,
    max_urls: Optional[int] = None,
    max_bytes: Optional[int] = None,
    scope: bool = True,
    cross_submission: bool = True,
    timeout: Optional[float] = None,
    errors: str = "raise",
) -> dict[str, Any]:
    """The options every discovery takes (discover, discover_many, the frames of a URL or an
    index), as the Rust side reads them."""
    return {
        "per_host": per_host,
        "max_depth": max_depth,
        "max_sitemaps": max_sitemaps,
        "max_urls": max_urls,
        "max_bytes": max_bytes,
        "scope": scope,
        "cross_submission": cross_submission,
        "timeout": timeout,
        "errors": errors,
    }


def validate(
    source: Source,
    *,
    url: Optional[str] = None,
    follow: bool = False,
    max_bytes: Optional[int] = None,
    timeout: Optional[float] = None,
) -> Report:
    """Check a sitemap against every rule of the catalogue (``docs/RULES.md``).

    ``url`` is where it is served: scope rules (``loc-out-of-scope``,
    ``index-cross-site``) need it. ``follow=True`` also validates each child an index
    lists, fetched over HTTP; ``timeout`` bounds each request (seconds, default 120). The
    :class:`Report` has ``findings``, ``summary``, ``ok``,
    ``to_sarif()`` (a dict, SARIF 2.1.0) and ``to_json()`` (the document of RULES.md).

    A URL that gives nothing (an error status, a refused connection, a timeout) raises
    :class:`FetchError`; what was received is judged in the report (an HTML page is a
    ``unknown-root`` error, ``ok`` false), and children that ``follow=True`` could not
    read are listed in ``failed`` (``ok`` false).

    >>> rep = mapwright.validate(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...                          b'<url><loc>https://example.com/</loc><priority>2</priority></url></urlset>')
    >>> [(f.rule, f.severity, f.line) for f in rep.findings]
    [('priority-range', 'error', 1)]
    >>> rep.ok
    False
    """
    kind, value = _kind(source)
    return _mapwright.validate_source(kind, value, url=url, follow=follow, max_bytes=max_bytes, timeout=timeout)


def write(
    entries: Iterable[Union[Entry, dict[str, Any]]],
    out_dir: Union[str, "os.PathLike[str]"],
    *,
    base_url: str,
    gzip: bool = False,
    name: str = "sitemap",
    format: str = "xml",
    max_urls: Optional[int] = None,
    max_bytes: Optional[int] = None,
    extensions: Optional[Iterable[str]] = None,
) -> dict[str, Any]:
    """Write entries as a sitemap set in ``out_dir``: split before 50,000 URLs or 50 MiB,
    an index when there is more than one part, every file written under a temporary name
    and renamed into place when complete (the index last).

    ``entries`` are :class:`Entry` objects (from :func:`read`) or dicts with ``loc`` and
    optionally ``lastmod`` (text, ``date`` or ``datetime``), ``changefreq``, ``priority``,
    ``images`` (URLs or dicts) and ``alternates`` (``{"hreflang", "href"}`` dicts).
    ``base_url`` is the folder URL the files are published at. ``extensions`` names the
    extension namespaces to declare (``image``, ``video``, ``news``, ``xhtml``, ``geo``); by
    default all, since entries stream in and an entry needing an undeclared one starts a
    new file. Returns the summary: ``entry_point``, ``files``,
    ``urls``, ``bytes``, ``disk_bytes``, ``removed``.

    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> mapwright.write([{"loc": "https://example.com/"}], out, base_url="https://example.com/")["files"]
    ['sitemap.xml']
    """
    return _mapwright.write_set(
        entries,
        os.fspath(out_dir),
        base_url,
        gzip=gzip,
        name=name,
        format=format,
        max_urls=max_urls,
        max_bytes=max_bytes,
        extensions=None if extensions is None else list(extensions),
    )


def _is_robots(url: str) -> bool:
    """Whether an http(s) URL names a robots.txt (advertools' test: the URL ends with it)."""
    return url.split("#")[0].split("?")[0].lower().endswith("/robots.txt")


def _columns(
    source: Union[Source, Entries],
    *,
    max_bytes: Optional[int],
    errors: FrameOnError,
    arrow: bool,
    scope: bool,
    normalized: bool,
    timeout: Optional[float],
) -> dict[str, Any]:
    """The Rust column builder over a source, a Reader, a Discovery or an iterable of Entry;
    with ``arrow``, ``loc`` comes as an Arrow string column's buffers (see :func:`_arrow_loc`).
    An index's children are followed (fetched, as advertools does), never rows of their own.
    A partial result raises a :class:`PartialSitemapError` whose ``_columns`` holds what was read."""
    if errors not in ("raise", "warn", "rows"):
        raise ValueError(f"errors must be 'raise', 'warn' or 'rows', not {errors!r}")
    # How an index's children are read: as a URL source's sitemaps are.
    follow = _options(max_bytes=max_bytes, scope=scope, timeout=timeout, errors=errors)
    if isinstance(source, (Reader, Discovery)):
        return _mapwright.columns(source, arrow, errors, normalized, follow)
    if isinstance(source, str) and _is_url(source):
        # As advertools' sitemap_to_df: a robots.txt's Sitemap: lines and an index's children
        # (on any host unless scope=True) are followed; a URL listed twice in one sitemap is
        # one row, in two sitemaps two.
        d = _mapwright.start_discovery(source, follow, mode="robots" if _is_robots(source) else "sitemap", dedupe="sitemap")
        return _mapwright.columns(d, arrow, errors, normalized, follow)
    try:
        _kind(source)
    except TypeError:
        # Not a source: an iterable of Entry (a list, a filtered generator).
        return _mapwright.columns(iter(source), arrow, errors, normalized, follow)  # type: ignore[arg-type]
    reader = read(source, max_bytes=max_bytes, timeout=timeout)  # type: ignore[arg-type]
    return _mapwright.columns(reader, arrow, errors, normalized, follow)


def _frame_of(
    build: Any,
    source: Union[Source, Entries],
    max_bytes: Optional[int],
    errors: FrameOnError,
    arrow: bool,
    scope: bool,
    normalized: bool,
    timeout: Optional[float],
) -> Any:
    """``build(columns)`` over the columns of ``source``; a partial result's exception
    carries the frame of what was read as its ``frame``."""
    try:
        c = _columns(source, max_bytes=max_bytes, errors=errors, arrow=arrow, scope=scope, normalized=normalized, timeout=timeout)
    except PartialSitemapError as e:
        cols = getattr(e, "_columns", None)
        if cols is not None:
            del e._columns  # type: ignore[attr-defined]
            e.frame = build(cols)
        raise
    return build(c)


def _per_sitemap(np: Any, codes: Any, values: list[Any], missing: Any, dtype: Any) -> Any:
    """A column of one value per sitemap spread over the rows by their sitemap codes
    (``-1``: no sitemap, ``missing``)."""
    table = np.array(list(values) + [missing], dtype=dtype)
    return table[np.where(codes >= 0, codes, len(values))]


def _require(module: str, extra: str, what: str) -> Any:
    """``module``, or an ImportError that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"mapwright.{what} needs {module}, which is not installed: "
            f"pip install 'mapwright-sitemaps[{extra}]' (or pip install {module})"
        ) from e


def _pyarrow() -> Any:
    """pyarrow when it is installed, else None."""
    try:
        import pyarrow  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    return pyarrow


def _arrow_loc(pa: Any, c: dict[str, Any]) -> Any:
    """The ``loc`` column as a pyarrow ``large_string`` array over the two buffers Rust filled
    (offsets and UTF-8 bytes): no Python ``str`` per row, no copy."""
    buffers = [None, pa.py_buffer(c["loc_offsets"]), pa.py_buffer(c["loc_data"])]
    return pa.Array.from_buffers(pa.large_string(), c["rows"], buffers)


def to_pandas(
    source: Union[Source, Entries],
    *,
    max_bytes: Optional[int] = None,
    errors: FrameOnError = "raise",
    scope: bool = False,
    normalized: bool = False,
    timeout: Optional[float] = None,
) -> "pandas.DataFrame":
    """One row per URL as a pandas ``DataFrame``, with the rows and columns advertools'
    ``sitemap_to_df`` gives for the same source (the package README lists the few
    differences and why).

    ``source`` is anything :func:`read` takes, or a :class:`Reader`, :class:`Discovery` or
    iterable of :class:`Entry`. An http(s) URL is read as ``sitemap_to_df`` reads it: an
    index's children are followed, on any host (``scope=True`` drops what search engines
    drop: URLs outside their sitemap's scope and children on another site), a robots.txt's
    ``Sitemap:`` lines are followed; a URL listed twice in one sitemap is one row (the
    first), in two sitemaps two rows. A path or bytes is one file: its duplicates dropped; an
    index file's children are fetched and read as a URL source's are (never rows of their
    own). ``timeout`` bounds each HTTP request (seconds, default 120).

    Columns (dtypes): ``loc`` (text: the URL as written; its normal form with
    ``normalized=True``), ``lastmod`` (``datetime64[ns, UTC]``, a time without a zone read
    as UTC), ``changefreq`` (categorical), ``priority`` (float64), ``sitemap`` (categorical:
    the sitemap each row came from), then, each when some row has one, the extensions as
    text: ``image_*``, ``video_*``, ``publication_name``, ``publication_language``,
    ``news_*`` (of an entry's last image and video, as advertools keeps them),
    ``image_*_all`` (every image, joined by ``@@``, when an entry has several),
    ``alternate_hreflang``/``alternate_href`` (joined by ``@@``); for a URL source,
    ``etag`` (text), ``sitemap_last_modified`` (``datetime64[ns, UTC]``),
    ``sitemap_size_mb`` (float64, uncompressed), ``download_date`` (``datetime64[ns, UTC]``),
    and with ``errors="rows"`` ``errors`` (text). Columns are built in Rust.

    Failures raise, whatever the source (a URL, a path, bytes): nothing readable raises the
    :class:`SitemapError` subclass of the cause (``FetchError`` for a 404 or a refused
    connection, ``NotASitemapError`` for an HTML page, ``GzipError``,
    ``SitemapTooLargeError``...), naming the URL. A partial result (an index one of whose
    children failed, a file that broke after some entries) raises
    :class:`PartialSitemapError`: its ``frame`` is the frame of what was read, ``failed``
    lists ``(source, why)``. ``errors="warn"`` returns that frame with a
    :class:`PartialSitemapWarning` instead; ``errors="rows"`` returns it with a row per
    failure (``sitemap``, ``errors``), as advertools does. Sitemaps that list entries none of
    which gives a row (each ``<loc>`` invalid, or out of scope with ``scope=True``) raise
    :class:`NoUrlError`, never an empty frame, and so does one that lists no entry (the CLI's
    ``read`` exits 1 on both).

    Switching from advertools is one line::

        df = adv.sitemap_to_df("https://example.com/sitemap_index.xml")
        df = mapwright.to_pandas("https://example.com/sitemap_index.xml")

    >>> df = mapwright.to_pandas(b"https://example.com/a\\nhttps://example.com/b\\n")
    >>> list(df["loc"])
    ['https://example.com/a', 'https://example.com/b']
    """
    np = _require("numpy", "pandas", "to_pandas")
    pd = _require("pandas", "pandas", "to_pandas")

    # The string dtype pandas gives a list of str (pandas 3: "str"; 2: object). When it is
    # pyarrow's, the column is handed over as an Arrow array, built in Rust: the same column,
    # without a Python object per row (a million URLs: 0.6 s saved).
    default = pd.Series(["-"]).dtype
    pa = _pyarrow() if getattr(default, "storage", None) == "pyarrow" else None

    def utc(ns: Any) -> Any:
        return pd.DatetimeIndex(np.asarray(ns, dtype=np.int64).view("M8[ns]")).tz_localize("UTC")

    def build(c: dict[str, Any]) -> Any:
        n = c["rows"]
        cf = pd.Categorical.from_codes(np.frombuffer(c["changefreq"], dtype=np.int8), categories=c["changefreq_categories"])
        sm_codes = np.frombuffer(c["sitemap"], dtype=np.int32)
        sitemap = pd.Categorical.from_codes(sm_codes, categories=pd.Index(c["sitemap_categories"], dtype=object))
        cols = {
            # Text as pandas infers it from str (pandas 3: its string dtype; 2: object), as advertools gets it.
            "loc": c["loc"] if pa is None else pd.array(_arrow_loc(pa, c), dtype=default),
            "lastmod": utc(np.frombuffer(c["lastmod"], dtype=np.int64)),
            "changefreq": cf,
            "priority": np.frombuffer(c["priority"], dtype=np.float64),
            "sitemap": sitemap,
        }
        for name, values in c["text"].items():
            cols[name] = pd.array(values, dtype=default)
        meta = c.get("sitemap_meta")
        if meta is not None:
            if any(v is not None for v in meta["etag"]):
                cols["etag"] = pd.array(_per_sitemap(np, sm_codes, meta["etag"], None, object), dtype=default)
            if any(v is not None for v in meta["last_modified"]):
                # An HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"), as advertools parses it.
                parsed = pd.to_datetime(pd.Series(meta["last_modified"], dtype=object), utc=True, errors="coerce")
                ns = parsed.astype("datetime64[ns, UTC]").array.asi8
                cols["sitemap_last_modified"] = utc(_per_sitemap(np, sm_codes, list(ns), np.iinfo(np.int64).min, np.int64))
            cols["sitemap_size_mb"] = _per_sitemap(np, sm_codes, meta["size_mb"], np.nan, np.float64)
            cols["download_date"] = utc(_per_sitemap(np, sm_codes, meta["download_date"], np.iinfo(np.int64).min, np.int64))
        df = pd.DataFrame(cols, index=pd.RangeIndex(n))
        if c["errors"]:
            # advertools' rows for the sitemaps that failed: the sitemap and the cause, all else missing.
            failed = pd.DataFrame({"sitemap": [s for s, _ in c["errors"]], "errors": [w for _, w in c["errors"]]})
            df["sitemap"] = df["sitemap"].astype(object)
            df = pd.concat([df, failed], ignore_index=True)
            df["sitemap"] = df["sitemap"].astype("category")
            df["errors"] = df["errors"].astype(default)
        return df

    return cast("pandas.DataFrame", _frame_of(build, source, max_bytes, errors, pa is not None, scope, normalized, timeout))


# The keyword arguments repeat to_pandas()'s on purpose: the public signature of each (help(),
# the stubs); both hand them to the same _columns().
def to_polars(
    source: Union[Source, Entries],
    *,
    max_bytes: Optional[int] = None,
    errors: FrameOnError = "raise",
    scope: bool = False,
    normalized: bool = False,
    timeout: Optional[float] = None,
) -> "polars.DataFrame":
    """Like :func:`to_pandas`, as a polars ``DataFrame`` (``lastmod``,
    ``sitemap_last_modified`` and ``download_date`` as ``Datetime("ns", "UTC")``,
    ``changefreq`` and ``sitemap`` as ``Categorical``, text as ``String``); the same rows,
    and failures raise the same way (a :class:`PartialSitemapError`'s ``frame`` is a polars
    frame).

    >>> df = mapwright.to_polars(b"https://example.com/a\\n")   # doctest: +SKIP
    >>> df["loc"].to_list()                                     # doctest: +SKIP
    ['https://example.com/a']
    """
    np = _require("numpy", "polars", "to_polars")
    pl = _require("polars", "polars", "to_polars")

    pa = _pyarrow()
    nat = np.iinfo(np.int64).min

    def utc(name: str, ns: Any) -> Any:
        return pl.Series(name, ns, dtype=pl.Int64).replace(nat, None).cast(pl.Datetime("ns", "UTC"))

    def build(c: dict[str, Any]) -> Any:
        cf_codes = np.frombuffer(c["changefreq"], dtype=np.int8)
        cf_names = np.array(c["changefreq_categories"], dtype=object)
        sm_codes = np.frombuffer(c["sitemap"], dtype=np.int32)
        sm_names = np.array(c["sitemap_categories"] or [""], dtype=object)
        cols = {
            "loc": pl.Series("loc", c["loc"] if pa is None else _arrow_loc(pa, c), dtype=pl.String),
            "lastmod": utc("lastmod", np.frombuffer(c["lastmod"], dtype=np.int64)),
            # Lists, not numpy object arrays: polars makes an Object column of one that starts with None.
            "changefreq": pl.Series("changefreq", np.where(cf_codes >= 0, cf_names[np.maximum(cf_codes, 0)], None).tolist(), dtype=pl.String).cast(pl.Categorical),
            "priority": pl.Series("priority", np.frombuffer(c["priority"], dtype=np.float64)).fill_nan(None),
            "sitemap": pl.Series("sitemap", np.where(sm_codes >= 0, sm_names[np.maximum(sm_codes, 0)], None).tolist(), dtype=pl.String).cast(pl.Categorical),
        }
        for name, values in c["text"].items():
            cols[name] = pl.Series(name, values, dtype=pl.String)
        meta = c.get("sitemap_meta")
        if meta is not None:
            if any(v is not None for v in meta["etag"]):
                cols["etag"] = pl.Series("etag", _per_sitemap(np, sm_codes, meta["etag"], None, object).tolist(), dtype=pl.String)
            if any(v is not None for v in meta["last_modified"]):
                # An HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT").
                parsed = pl.Series(meta["last_modified"], dtype=pl.String).str.strptime(
                    pl.Datetime("ns", "UTC"), "%a, %d %b %Y %H:%M:%S GMT", strict=False
                )
                ns = parsed.cast(pl.Int64).fill_null(nat).to_numpy()
                cols["sitemap_last_modified"] = utc("sitemap_last_modified", _per_sitemap(np, sm_codes, list(ns), nat, np.int64))
            cols["sitemap_size_mb"] = pl.Series("sitemap_size_mb", _per_sitemap(np, sm_codes, meta["size_mb"], np.nan, np.float64)).fill_nan(None)
            cols["download_date"] = utc("download_date", _per_sitemap(np, sm_codes, meta["download_date"], nat, np.int64))
        df = pl.DataFrame(cols)
        if c["errors"]:
            failed = pl.DataFrame(
                {"sitemap": [s for s, _ in c["errors"]], "errors": [w for _, w in c["errors"]]},
                schema={"sitemap": pl.String, "errors": pl.String},
            )
            df = pl.concat([df.with_columns(pl.col("sitemap").cast(pl.String)), failed], how="diagonal_relaxed")
            df = df.with_columns(pl.col("sitemap").cast(pl.Categorical))
        return df

    return cast("polars.DataFrame", _frame_of(build, source, max_bytes, errors, pa is not None, scope, normalized, timeout))


# --- many sites, as Arrow batches (for a distributed engine) ---------------------------------

from ._mapwright import SiteBatches  # noqa: E402

__all__ += ["discover_many", "SiteBatches"]


# Alike on purpose: the keyword arguments repeat discover()'s: they are the public signature (help(),
# the .pyi stubs, editors); _options() turns them into the one dict the Rust side reads.
def discover_many(
    sites: Iterable[str],
    *,
    hosts_in_flight: int = 64,
    per_host: Optional[int] = None,
    max_depth: Optional[int] = None,
    max_sitemaps: Optional[int] = None,
    max_urls: Optional[int] = None,
    max_bytes: Optional[int] = None,
    scope: bool = True,
    cross_submission: bool = True,
    timeout: Optional[float] = None,
    errors: FrameOnError = "raise",
) -> SiteBatches:
    """Every URL of many sites' sitemaps, as ``pyarrow.RecordBatch``es: ``mapwright discover
    --sites`` from Python, one call per partition of a distributed engine.

    ``sites`` are lines of a site list (any URL of each site, ``https://`` assumed; blank
    lines and ``#`` comments skipped), read at the call. ``hosts_in_flight`` sites are
    discovered at once, each as :func:`discover` would (robots.txt, indexes, scope,
    deduplication per site, ``per_host`` requests at a time and robots.txt's Crawl-delay).
    The batches have the columns of the CLI's Parquet (``--format parquet``): ``loc``,
    ``lastmod`` (as written), ``changefreq``, ``priority``, ``images``, ``videos``, ``news``,
    ``alternates``, ``geo``, ``pagemap`` (nested), ``sitemap``, ``site``. They are built in
    Rust without the GIL and handed to pyarrow without a copy, so the worker's other threads
    keep running.

    The result is an Arrow stream (the Arrow PyCapsule interface, ``__arrow_c_stream__``):
    ``pa.table(it)``, ``pl.DataFrame(it)`` and DuckDB (``duckdb.sql("FROM it")``) read it
    directly, without a copy; iterating gives one ``pyarrow.RecordBatch`` at a time. Its
    batches are taken once, whichever way.

    Failures, judged per site as the CLI's ``--summary`` does (``summaries`` holds its line
    per site, ``failed`` the ``(site, why)`` of each that failed, once the batches are
    taken), and as :func:`discover` judges its one site: when no site gave a URL, a
    :class:`FetchError` naming the first (a :class:`NoUrlError` when their sitemaps were read
    but gave no URL, every one out of scope say); when some sites failed (no sitemap, an error
    status, a failed child sitemap, no URL) after the batches of the others, a
    :class:`PartialSitemapError` whose ``failed`` lists ``(site, why)``, or with
    ``errors="warn"`` a :class:`PartialSitemapWarning`. Through the Arrow stream, such a
    failure is the stream's error, raised by the engine with the same message. With
    ``errors="rows"`` no exception and no warning, even when every site failed: an
    ``errors`` column, a row per sitemap that failed (its ``sitemap``, its ``site``, the cause)
    or per site that failed as a whole (``sitemap`` null), ``loc`` and all else null; the URL
    rows have a null ``errors``. That is what a distributed engine's task wants: a broken site
    is a row saying why, never a failed task that loses the other sites' rows.

    >>> import pyarrow as pa                                               # doctest: +SKIP
    >>> table = pa.table(mapwright.discover_many(["example.com"], errors="rows"))  # doctest: +SKIP
    """
    if isinstance(sites, (str, bytes)):
        raise TypeError("sites must be an iterable of site URLs (a list of str), not one string")
    if errors not in ("raise", "warn", "rows"):
        raise ValueError(f"errors must be 'raise', 'warn' or 'rows', not {errors!r}")
    _require("pyarrow", "arrow", "discover_many")
    options = _options(per_host, max_depth, max_sitemaps, max_urls, max_bytes, scope, cross_submission, timeout, errors)
    return _mapwright.start_discover_many([str(s) for s in sites], hosts_in_flight, options)
