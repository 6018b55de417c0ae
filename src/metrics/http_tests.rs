//! The request parser on whole requests, every split point, and garbage.

use super::*;

fn scrape(req: &str) -> Scrape {
    match parse(req.as_bytes()) {
        Parsed::Scrape(s) => s,
        other => panic!("{req:?}: {other:?}"),
    }
}

fn refused(req: &[u8]) -> Status {
    match parse(req) {
        Parsed::Refuse(s) => s,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(req)),
    }
}

#[test]
fn scrapes_and_keep_alive() {
    let s = scrape("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!((s.head_only, s.format, s.keep_alive), (false, Format::Prometheus, true));
    let s = scrape("GET /metrics?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert!(!s.keep_alive);
    let s = scrape("GET /metrics HTTP/1.0\r\n\r\n");
    assert!(!s.keep_alive);
    let s = scrape("GET /metrics HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n");
    assert!(s.keep_alive);
    let s = scrape("HEAD /metrics HTTP/1.1\nAccept: application/openmetrics-text\n\n");
    assert_eq!((s.head_only, s.format), (true, Format::OpenMetrics));
    let s = scrape("GET /metrics HTTP/1.1\r\nAccept: text/plain;q=0.1\r\nAccept: application/openmetrics-text\r\n\r\n");
    assert_eq!(s.format, Format::OpenMetrics);
}

#[test]
fn pipelined_requests_are_taken_one_at_a_time() {
    let one = "GET /metrics HTTP/1.1\r\n\r\n";
    let two = format!("{one}{one}");
    let s = scrape(&two);
    assert_eq!(s.consumed, one.len());
    assert_eq!(
        parse(&two.as_bytes()[s.consumed..]),
        Parsed::Scrape(Scrape { consumed: one.len(), ..s })
    );
}

#[test]
fn every_split_point_is_incomplete_until_the_end() {
    let req = b"GET /metrics HTTP/1.1\r\nHost: localhost:9121\r\nAccept: */*\r\n\r\n";
    for cut in 0..req.len() {
        assert_eq!(parse(&req[..cut]), Parsed::Incomplete, "cut at {cut}");
    }
    assert!(matches!(parse(req), Parsed::Scrape(_)));
}

#[test]
fn refusals() {
    assert_eq!(refused(b"GET /other HTTP/1.1\r\n\r\n"), Status::NotFound);
    assert_eq!(refused(b"GET / HTTP/1.1\r\n\r\n"), Status::NotFound);
    assert_eq!(refused(b"POST /metrics HTTP/1.1\r\n\r\n"), Status::MethodNotAllowed);
    assert_eq!(refused(b"GET /metrics HTTP/2.0\r\n\r\n"), Status::VersionNotSupported);
    assert_eq!(
        refused(b"GET /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"),
        Status::BadRequest
    );
    assert_eq!(refused(b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n"), Status::BadRequest);
    assert_eq!(refused(b"GET /metrics HTTP/1.1\r\nBad Name: x\r\n\r\n"), Status::BadRequest);
    // A bad request line is refused as soon as it ends, before the head does.
    assert_eq!(refused(b"hello\r\n"), Status::BadRequest);
    assert_eq!(refused(b"\x00\x01\x02 / HTTP/1.1\n"), Status::BadRequest);
    assert_eq!(refused(b"GET /metrics SPDY/3\r\n"), Status::BadRequest);
    assert_eq!(refused(b"GET  /metrics HTTP/1.1\r\n"), Status::BadRequest);
    // An endless head stops at the bound.
    let mut long = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    long.resize(REQUEST_BYTES_MAX, b'a');
    assert_eq!(refused(&long), Status::HeadersTooLarge);
    assert_eq!(parse(&long[..REQUEST_BYTES_MAX - 1]), Parsed::Incomplete);
}

#[test]
fn responses() {
    let r = response(Status::Ok, "text/plain", b"abc", true, false);
    assert_eq!(
        r,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\
          Connection: keep-alive\r\n\r\nabc"
    );
    let r = response(Status::Ok, "text/plain", b"abc", false, true);
    assert!(r.ends_with(b"Content-Length: 3\r\nConnection: close\r\n\r\n"));
    let r = String::from_utf8(error_response(Status::MethodNotAllowed)).unwrap();
    assert!(r.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    assert!(r.contains("\r\nAllow: GET, HEAD\r\n") && r.contains("Connection: close"));
}
