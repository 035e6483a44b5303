//! Incremental mode: conditional requests, index-lastmod skips, and added/removed URLs.
