//! Integration tests of the service's router, driven in process (tower `oneshot`) and once
//! through a real listener on 127.0.0.1:0.

mod accounts;
mod alerts;
mod api;
mod checks;
mod connections;
mod console;
mod console_answers;
mod console_domains;
mod console_members;
mod console_roles;
mod console_words;
mod counts;
mod diffs;
mod dns;
mod e2e;
mod e2e_alerts;
mod e2e_domains;
mod e2e_members;
mod e2e_reads;
mod gate;
mod hardening;
mod layers;
mod life;
mod ping;
mod recovery;
mod scheduler;
mod sharing;
mod sitehost;
mod smtp;
mod strangers;
mod support;
mod tree;
mod verify;
mod webhooks;
mod written;
