//! A DNS server of the test's own on 127.0.0.1 (UDP, answers encoded by hickory-proto): TXT
//! records per name, names that exist without TXT records, NXDOMAIN for every other name, and
//! a silent mode that answers nothing (UDP) and holds TCP connections open without a word.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::TXT;
use hickory_proto::rr::{RData, Record, RecordType};
use tokio::net::{TcpListener, UdpSocket};

/// What the server knows.
#[derive(Default)]
struct Zone {
    /// Name (lower case, no trailing dot) -> its TXT records (empty: the name exists without).
    names: Mutex<HashMap<String, Vec<String>>>,
    silent: AtomicBool,
    queries: AtomicUsize,
}

/// The running server; it stops when dropped.
pub struct DnsServer {
    pub addr: SocketAddr,
    zone: Arc<Zone>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl DnsServer {
    /// Binds UDP and TCP on one port of 127.0.0.1.
    pub async fn start() -> DnsServer {
        let (udp, tcp) = loop {
            let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            if let Ok(tcp) = TcpListener::bind(udp.local_addr().unwrap()).await {
                break (udp, tcp);
            }
        };
        let addr = udp.local_addr().unwrap();
        let zone = Arc::new(Zone::default());
        let answering = zone.clone();
        let udp_task = tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((n, from)) = udp.recv_from(&mut buf).await else { continue };
                answering.queries.fetch_add(1, Ordering::SeqCst);
                if answering.silent.load(Ordering::SeqCst) {
                    continue;
                }
                if let Some(answer) = answer(&answering, &buf[..n]) {
                    let _ = udp.send_to(&answer, from).await;
                }
            }
        });
        // TCP (the resolver's fallback) is never answered: connections are held until dropped.
        let tcp_task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = tcp.accept().await {
                held.push(stream);
            }
        });
        DnsServer { addr, zone, tasks: vec![udp_task, tcp_task] }
    }

    /// Publishes TXT records at `name` (replacing its earlier ones).
    pub fn publish(&self, name: &str, records: &[&str]) {
        let records = records.iter().map(|r| r.to_string()).collect();
        self.zone.names.lock().unwrap().insert(name.to_ascii_lowercase(), records);
    }

    /// Takes `name` out of DNS altogether (NXDOMAIN from now on).
    pub fn remove(&self, name: &str) {
        self.zone.names.lock().unwrap().remove(&name.to_ascii_lowercase());
    }

    /// Answers nothing while on.
    pub fn set_silent(&self, silent: bool) {
        self.zone.silent.store(silent, Ordering::SeqCst);
    }

    /// Queries received so far.
    pub fn queries(&self) -> usize {
        self.zone.queries.load(Ordering::SeqCst)
    }

    /// A [`mapwright_server::domains::dns::DnsConfig`] that asks this server, with a short wait.
    pub fn config(&self) -> mapwright_server::domains::dns::DnsConfig {
        mapwright_server::domains::dns::DnsConfig { servers: vec![self.addr], timeout: Duration::from_millis(300) }
    }
}

/// The encoded answer to one query, or `None` for bytes that are no query.
fn answer(zone: &Zone, bytes: &[u8]) -> Option<Vec<u8>> {
    let request = Message::from_vec(bytes).ok()?;
    let query = request.queries().first()?.clone();
    let name = query.name().to_ascii().trim_end_matches('.').to_ascii_lowercase();
    let mut response = Message::new();
    response
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true)
        .add_query(query.clone());
    match zone.names.lock().unwrap().get(&name) {
        None => {
            response.set_response_code(ResponseCode::NXDomain);
        }
        Some(records) => {
            if query.query_type() == RecordType::TXT {
                for text in records {
                    let rdata = RData::TXT(TXT::new(vec![text.clone()]));
                    response.add_answer(Record::from_rdata(query.name().clone(), 60, rdata));
                }
            }
        }
    }
    response.to_vec().ok()
}
