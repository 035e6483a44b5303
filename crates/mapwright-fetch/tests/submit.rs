//! Ping and IndexNow.
