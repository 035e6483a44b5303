//! The peers' baseline (quick-xml events, `<loc>` in `<url>` counted, nothing decoded), for
//! profiling the reader against it with the same input and build.

use quick_xml::events::Event;

fn main() {
    let path = std::env::args().nth(1).expect("usage: qxcount FILE");
    let file = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::open(path).expect("open"));
    let mut r = quick_xml::Reader::from_reader(file);
    let mut buf = Vec::with_capacity(4096);
    let (mut in_url, mut n) = (false, 0u64);
    loop {
        match r.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.name().0 {
                "url" => in_url = true,
                "loc" if in_url => n += 1,
                _ => {}
            },
            Ok(Event::End(e)) if e.name().0 == "url" => in_url = false,
            Ok(Event::Eof) => break,
            Err(e) => panic!("{e}"),
            _ => {}
        }
        buf.clear();
    }
    println!("urls={n}");
}
