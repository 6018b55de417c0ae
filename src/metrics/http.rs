//! Just enough HTTP/1.x for a metrics endpoint: parse one request head from the bytes
//! received so far (bounded by [`REQUEST_BYTES_MAX`]), decide what to answer, and write a
//! response. No I/O: the endpoint thread (`runtime::metrics`) owns the sockets.
//!
//! What is answered:
//! - `GET /metrics` (any query string) and `HEAD /metrics`: 200 with the figures, in the
//!   format the `Accept` header prefers ([`Format::negotiate`]);
//! - any other path: 404; another method on `/metrics`: 405 (with `Allow`);
//! - a request line or header that is not HTTP/1.x, or a request with a body: 400; a head
//!   over [`REQUEST_BYTES_MAX`]: 431; an HTTP version other than 1.0 and 1.1: 505.
//!
//! Keep-alive follows the version: HTTP/1.1 keeps the connection unless the request says
//! `Connection: close`, HTTP/1.0 closes it unless it says `Connection: keep-alive`. Every
//! error response closes the connection.

use super::exposition::Format;

/// The longest request head accepted (request line and headers).
pub const REQUEST_BYTES_MAX: usize = 8192;

/// The statuses the endpoint answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    HeadersTooLarge,
    Unavailable,
    VersionNotSupported,
}

impl Status {
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::BadRequest => 400,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::HeadersTooLarge => 431,
            Status::Unavailable => 503,
            Status::VersionNotSupported => 505,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::BadRequest => "Bad Request",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::Unavailable => "Service Unavailable",
            Status::VersionNotSupported => "HTTP Version Not Supported",
        }
    }
}

/// A well-formed request for the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scrape {
    /// HEAD: the headers without the body.
    pub head_only: bool,
    pub format: Format,
    pub keep_alive: bool,
    /// Bytes of the buffer this request took (a pipelined next one follows).
    pub consumed: usize,
}

/// What the bytes received so far ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// The head is not complete yet (and within bounds): read more.
    Incomplete,
    Scrape(Scrape),
    /// Answer this status and close.
    Refuse(Status),
}

/// Parses the request at the start of `buf`.
pub fn parse(buf: &[u8]) -> Parsed {
    let Some(head_len) = head_end(buf) else {
        // Refuse a bad request line as soon as it is complete, a long head at the bound.
        if let Some(line_end) = buf.iter().position(|&b| b == b'\n') {
            if let Err(status) = request_line(trim_cr(&buf[..line_end])) {
                return Parsed::Refuse(status);
            }
        }
        return if buf.len() >= REQUEST_BYTES_MAX {
            Parsed::Refuse(Status::HeadersTooLarge)
        } else {
            Parsed::Incomplete
        };
    };
    if head_len > REQUEST_BYTES_MAX {
        return Parsed::Refuse(Status::HeadersTooLarge);
    }
    match request(&buf[..head_len]) {
        Ok(mut scrape) => {
            scrape.consumed = head_len;
            Parsed::Scrape(scrape)
        }
        Err(status) => Parsed::Refuse(status),
    }
}

/// The length of the head (through its empty line), when it is complete. Lines end in
/// CRLF or, leniently, LF.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut start = 0;
    for (i, &b) in buf.iter().enumerate() {
        if b == b'\n' {
            if trim_cr(&buf[start..i]).is_empty() && start > 0 {
                return Some(i + 1);
            }
            start = i + 1;
        }
    }
    None
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// RFC 9110's token characters (methods, header names).
fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The request line's method, target and whether the version is HTTP/1.1.
struct RequestLine<'a> {
    method: &'a [u8],
    target: &'a [u8],
    http11: bool,
}

fn request_line(line: &[u8]) -> Result<RequestLine<'_>, Status> {
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Status::BadRequest);
    };
    if !is_token(method) || target.is_empty() || !target.iter().all(|&b| b.is_ascii_graphic()) {
        return Err(Status::BadRequest);
    }
    let http11 = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        v if v.starts_with(b"HTTP/")
            && v.len() > 5
            && v[5..].iter().all(|b| b"0123456789.".contains(b)) =>
        {
            return Err(Status::VersionNotSupported)
        }
        _ => return Err(Status::BadRequest),
    };
    Ok(RequestLine { method, target, http11 })
}

/// A complete head (`head` ends with its empty line).
fn request(head: &[u8]) -> Result<Scrape, Status> {
    let mut lines = head.split(|&b| b == b'\n').map(trim_cr);
    let line = request_line(lines.next().unwrap_or_default())?;
    let mut accept = String::new();
    let (mut close, mut keep, mut has_body) = (false, false, false);
    for header in lines.filter(|l| !l.is_empty()) {
        let colon = header.iter().position(|&b| b == b':').ok_or(Status::BadRequest)?;
        let (name, value) = (&header[..colon], header[colon + 1..].trim_ascii());
        if !is_token(name) {
            return Err(Status::BadRequest);
        }
        let value = std::str::from_utf8(value).map_err(|_| Status::BadRequest)?;
        if name.eq_ignore_ascii_case(b"accept") {
            if !accept.is_empty() {
                accept.push(',');
            }
            accept.push_str(value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for option in value.split(',').map(str::trim) {
                close |= option.eq_ignore_ascii_case("close");
                keep |= option.eq_ignore_ascii_case("keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding")
            || (name.eq_ignore_ascii_case(b"content-length") && value != "0")
        {
            has_body = true;
        }
    }
    let path = line.target.split(|&b| b == b'?').next().unwrap_or_default();
    if path != b"/metrics" {
        return Err(Status::NotFound);
    }
    let head_only = match line.method {
        b"GET" => false,
        b"HEAD" => true,
        _ => return Err(Status::MethodNotAllowed),
    };
    if has_body {
        // A scrape has no body; its bytes would be taken for the next request.
        return Err(Status::BadRequest);
    }
    Ok(Scrape {
        head_only,
        format: Format::negotiate(&accept),
        keep_alive: if line.http11 { !close } else { keep && !close },
        consumed: 0,
    })
}

/// A complete response: status line, headers and (unless `head_only`) `body`.
pub fn response(
    status: Status,
    content_type: &str,
    body: &[u8],
    keep_alive: bool,
    head_only: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(160 + body.len());
    let connection = if keep_alive { "keep-alive" } else { "close" };
    out.extend_from_slice(
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
             Connection: {connection}\r\n",
            status.code(),
            status.reason(),
            body.len()
        )
        .as_bytes(),
    );
    if status == Status::MethodNotAllowed {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
    out
}

/// The response to a refused request (or connection): the reason as plain text, closing.
pub fn error_response(status: Status) -> Vec<u8> {
    let body = format!("{}\n", status.reason());
    response(status, "text/plain; charset=utf-8", body.as_bytes(), false, false)
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
