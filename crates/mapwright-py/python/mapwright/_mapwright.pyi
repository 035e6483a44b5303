"""Type stubs of the native module; the public names are re-exported by ``mapwright``."""

import datetime
import os
from typing import Any, Iterable, Iterator, Optional, Union

__version__: str

class SitemapError(Exception):
    """A sitemap could not be read, fetched or written."""

    rule: Optional[str]
    line: Optional[int]
    column: Optional[int]
    offset: Optional[int]
    url: Optional[str]

class MalformedSitemapError(SitemapError): ...
class SitemapEncodingError(SitemapError): ...
class SitemapTooLargeError(SitemapError): ...
class GzipError(SitemapError): ...
class NotASitemapError(SitemapError): ...
class FetchError(SitemapError): ...
class NoUrlError(SitemapError): ...
class WriteError(SitemapError): ...

class PartialSitemapError(SitemapError):
    """Some sitemaps were read and others not: ``failed`` lists ``(source, why)``; ``frame``
    is the data frame of what was read (``to_pandas``/``to_polars``), else ``None``."""

    failed: list[tuple[str, str]]
    frame: Any

class PartialSitemapWarning(UserWarning): ...

class Entry:
    """One entry: a page (``kind == "url"``) or an index's child (``kind == "sitemap"``)."""

    @property
    def kind(self) -> str: ...
    @property
    def loc(self) -> str: ...
    @property
    def loc_normalized(self) -> str: ...
    @property
    def lastmod(self) -> Union[datetime.datetime, datetime.date, str, None]: ...
    @property
    def lastmod_text(self) -> Optional[str]: ...
    @property
    def changefreq(self) -> Optional[str]: ...
    @property
    def priority(self) -> Optional[float]: ...
    @property
    def images(self) -> list[dict[str, Any]]: ...
    @property
    def videos(self) -> list[dict[str, Any]]: ...
    @property
    def news(self) -> Optional[dict[str, Any]]: ...
    @property
    def alternates(self) -> list[dict[str, str]]: ...
    @property
    def geo(self) -> Optional[dict[str, str]]: ...
    @property
    def pagemap(self) -> list[dict[str, Any]]: ...
    @property
    def sitemap(self) -> Optional[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

class Finding:
    """One diagnostic; ``str()`` gives the CLI's line ``file:line:column: severity[rule]: message``."""

    rule: str
    severity: str
    line: Optional[int]
    column: Optional[int]
    offset: Optional[int]
    loc: Optional[str]
    message: str
    file: str

class Reader(Iterator[Entry]):
    findings: list[Finding]
    dropped_findings: int
    format: Optional[str]
    name: str
    def __iter__(self) -> "Reader": ...
    def __next__(self) -> Entry: ...

class Discovery(Iterator[Entry]):
    summary: Optional[dict[str, Any]]
    sitemaps: list[dict[str, Any]]
    findings: list[Finding]
    notices: list[tuple[Optional[str], str]]
    def __iter__(self) -> "Discovery": ...
    def __next__(self) -> Entry: ...

class Report:
    findings: list[Finding]
    summary: dict[str, int]
    notes: list[tuple[str, str]]
    failed: list[tuple[str, str]]
    ok: bool
    def to_sarif(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...

def open_reader(
    kind: str,
    source: Any,
    url: Optional[str] = ...,
    strict: bool = ...,
    max_bytes: Optional[int] = ...,
    timeout: Optional[float] = ...,
) -> Reader: ...
def start_discovery(
    url: str,
    options: dict[str, Any],
    mode: str = ...,
    dedupe: str = ...,
    seeds: list[str] = ...,
    name: Optional[str] = ...,
    index: Optional[str] = ...,
) -> Discovery: ...
def validate_source(
    kind: str,
    source: Any,
    url: Optional[str] = ...,
    follow: bool = ...,
    max_bytes: Optional[int] = ...,
    timeout: Optional[float] = ...,
) -> Report: ...
def write_set(
    entries: Iterable[Any],
    out_dir: Union[str, "os.PathLike[str]"],
    base_url: str,
    gzip: bool = ...,
    name: str = ...,
    format: str = ...,
    max_urls: Optional[int] = ...,
    max_bytes: Optional[int] = ...,
    extensions: Optional[list[str]] = ...,
) -> dict[str, Any]: ...
def columns(
    source: Any,
    arrow: bool = ...,
    errors: str = ...,
    normalized: bool = ...,
    follow: Optional[dict[str, Any]] = ...,
) -> dict[str, Any]: ...

class SiteBatches(Iterator[Any]):
    """``pyarrow.RecordBatch``es of URL rows (pyarrow has no type hints: ``Any``), or one Arrow
    C stream of them (``__arrow_c_stream__``)."""

    summaries: list[dict[str, Any]]
    failed: list[tuple[str, str]]
    rows: int
    schema: Any
    def __iter__(self) -> "SiteBatches": ...
    def __next__(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Any = ...) -> Any: ...

def start_discover_many(sites: list[str], hosts_in_flight: int, options: dict[str, Any]) -> SiteBatches: ...
