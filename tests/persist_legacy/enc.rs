//! A small encoder for the RDB forms older Redis versions wrote (plain lists, zipmaps,
//! ziplists, quicklists of ziplists, string scores, second expire times), whole RDB files of
//! any version and DUMP payloads, written from the format's facts for the tests.

/// What a key holds; sorted-set scores as text ("1.5", "inf").
#[derive(Clone, Debug)]
pub enum Data {
    Str(String),
    List(Vec<String>),
    Set(Vec<String>),
    Hash(Vec<(String, String)>),
    ZSet(Vec<(String, String)>),
}

/// How a value is written.
#[derive(Clone, Copy, Debug)]
pub enum Form {
    Str,
    /// A string compressed with LZF (literal runs only, which any LZF reader takes).
    StrLzf,
    /// Type 1: count, strings.
    PlainList,
    /// Type 10.
    ListZiplist,
    /// Type 14: `per_node` elements per ziplist node, every other node LZF-compressed when
    /// `lzf`, plus an empty node at the end when `empty_node`.
    Quicklist {
        per_node: usize,
        lzf: bool,
        empty_node: bool,
    },
    /// Type 2.
    Set,
    /// Type 11.
    Intset,
    /// Type 3: scores as strings.
    ZSetText,
    /// Type 5: binary scores.
    ZSet2,
    /// Type 12.
    ZSetZiplist,
    /// Type 4.
    Hash,
    /// Type 9, with `free` unused bytes after every value.
    HashZipmap {
        free: u8,
    },
    /// Type 13.
    HashZiplist,
}

/// When a key expires.
#[derive(Clone, Copy, Debug)]
pub enum Expire {
    Never,
    /// Opcode 0xFD: unix seconds, 4 bytes.
    Secs(i64),
    /// Opcode 0xFC: unix milliseconds, 8 bytes.
    Ms(i64),
}

#[derive(Clone, Debug)]
pub struct Key {
    pub name: String,
    pub data: Data,
    pub form: Form,
    pub expire: Expire,
    /// Opcodes written before the type byte (0xF8 idle / 0xF9 freq).
    pub meta: Vec<u8>,
}

impl Key {
    pub fn new(name: &str, data: Data, form: Form) -> Key {
        Key { name: name.into(), data, form, expire: Expire::Never, meta: Vec::new() }
    }

    pub fn expire(mut self, e: Expire) -> Key {
        self.expire = e;
        self
    }

    pub fn meta(mut self, m: &[u8]) -> Key {
        self.meta = m.to_vec();
        self
    }
}

pub fn strs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

// ----- RDB primitives --------------------------------------------------------------------

pub fn length(out: &mut Vec<u8>, n: usize) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn canonical_int(s: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(s).ok()?;
    t.parse::<i64>().ok().filter(|n| n.to_string() == t)
}

/// A string as Redis writes it: small canonical integers in the int encodings.
pub fn string(out: &mut Vec<u8>, s: &[u8]) {
    match canonical_int(s) {
        Some(n) if i8::try_from(n).is_ok() => out.extend_from_slice(&[0xC0, n as u8]),
        Some(n) if i16::try_from(n).is_ok() => {
            out.push(0xC1);
            out.extend_from_slice(&(n as i16).to_le_bytes());
        }
        Some(n) if i32::try_from(n).is_ok() => {
            out.push(0xC2);
            out.extend_from_slice(&(n as i32).to_le_bytes());
        }
        _ => {
            length(out, s.len());
            out.extend_from_slice(s);
        }
    }
}

/// A string in the LZF encoding, made of literal runs (at most 32 bytes each).
pub fn lzf_string(out: &mut Vec<u8>, s: &[u8]) {
    let mut packed = Vec::new();
    for run in s.chunks(32) {
        packed.push((run.len() - 1) as u8);
        packed.extend_from_slice(run);
    }
    out.push(0xC3);
    length(out, packed.len());
    length(out, s.len());
    out.extend_from_slice(&packed);
}

/// CRC-64 (Jones polynomial, reflected), as RDB files and DUMP payloads use.
pub fn crc64(bytes: &[u8]) -> u64 {
    let mut crc = 0u64;
    for &b in bytes {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0x95AC_9329_AC4B_C9B5 } else { crc >> 1 };
        }
    }
    crc
}

// ----- ziplists, zipmaps, intsets --------------------------------------------------------

fn zl_entry(s: &[u8], prev: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if prev < 254 {
        out.push(prev as u8);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&(prev as u32).to_le_bytes());
    }
    match canonical_int(s).filter(|_| s.len() < 32) {
        Some(n @ 0..=12) => out.push(0xF1 + n as u8),
        Some(n) if i8::try_from(n).is_ok() => out.extend_from_slice(&[0xFE, n as u8]),
        Some(n) if i16::try_from(n).is_ok() => {
            out.push(0xC0);
            out.extend_from_slice(&(n as i16).to_le_bytes());
        }
        Some(n) if (-(1 << 23)..1 << 23).contains(&n) => {
            out.push(0xF0);
            out.extend_from_slice(&(n as i32).to_le_bytes()[..3]);
        }
        Some(n) if i32::try_from(n).is_ok() => {
            out.push(0xD0);
            out.extend_from_slice(&(n as i32).to_le_bytes());
        }
        Some(n) => {
            out.push(0xE0);
            out.extend_from_slice(&n.to_le_bytes());
        }
        None => {
            if s.len() < 64 {
                out.push(s.len() as u8);
            } else if s.len() < 1 << 14 {
                out.extend_from_slice(&[0x40 | (s.len() >> 8) as u8, s.len() as u8]);
            } else {
                out.push(0x80);
                out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            }
            out.extend_from_slice(s);
        }
    }
    out
}

/// A ziplist of `items`, canonical integers stored as integers (as Redis did).
pub fn ziplist(items: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    let (mut prev, mut tail) = (0, 10);
    for s in items {
        let e = zl_entry(s, prev);
        tail = 10 + body.len();
        prev = e.len();
        body.extend_from_slice(&e);
    }
    let mut zl = Vec::new();
    zl.extend_from_slice(&((body.len() + 11) as u32).to_le_bytes());
    zl.extend_from_slice(&(tail as u32).to_le_bytes());
    zl.extend_from_slice(&(items.len().min(0xFFFF) as u16).to_le_bytes());
    zl.extend_from_slice(&body);
    zl.push(0xFF);
    zl
}

/// A zipmap of `pairs` with `free` unused bytes after each value.
pub fn zipmap(pairs: &[(&[u8], &[u8])], free: u8) -> Vec<u8> {
    let len = |out: &mut Vec<u8>, n: usize| {
        if n < 254 {
            out.push(n as u8);
        } else {
            out.push(254);
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
    };
    let mut zm = vec![pairs.len().min(254) as u8];
    for (f, v) in pairs {
        len(&mut zm, f.len());
        zm.extend_from_slice(f);
        len(&mut zm, v.len());
        zm.push(free);
        zm.extend_from_slice(v);
        zm.extend(std::iter::repeat_n(b'?', usize::from(free)));
    }
    zm.push(0xFF);
    zm
}

fn intset(members: &[String]) -> Vec<u8> {
    let mut v: Vec<i64> = members.iter().map(|m| m.parse().expect("intset member")).collect();
    v.sort_unstable();
    let width: u32 = if v.iter().all(|&n| i16::try_from(n).is_ok()) {
        2
    } else if v.iter().all(|&n| i32::try_from(n).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::new();
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    for n in v {
        out.extend_from_slice(&n.to_le_bytes()[..width as usize]);
    }
    out
}

// ----- values, files, payloads -----------------------------------------------------------

fn flat(pairs: &[(String, String)]) -> Vec<&[u8]> {
    pairs.iter().flat_map(|(a, b)| [a.as_bytes(), b.as_bytes()]).collect()
}

fn bytes(items: &[String]) -> Vec<&[u8]> {
    items.iter().map(|s| s.as_bytes()).collect()
}

/// The type byte and payload of `data` written as `form`.
pub fn value(data: &Data, form: Form) -> (u8, Vec<u8>) {
    let mut out = Vec::new();
    let ty = match (form, data) {
        (Form::Str, Data::Str(s)) => {
            string(&mut out, s.as_bytes());
            0
        }
        (Form::StrLzf, Data::Str(s)) => {
            lzf_string(&mut out, s.as_bytes());
            0
        }
        (Form::PlainList, Data::List(items)) | (Form::Set, Data::Set(items)) => {
            length(&mut out, items.len());
            for s in items {
                string(&mut out, s.as_bytes());
            }
            if matches!(data, Data::List(_)) {
                1
            } else {
                2
            }
        }
        (Form::ListZiplist, Data::List(items)) => {
            string(&mut out, &ziplist(&bytes(items)));
            10
        }
        (Form::Quicklist { per_node, lzf, empty_node }, Data::List(items)) => {
            let nodes: Vec<&[String]> = items.chunks(per_node).collect();
            length(&mut out, nodes.len() + usize::from(empty_node));
            for (i, node) in nodes.iter().enumerate() {
                let zl = ziplist(&bytes(node));
                if lzf && i % 2 == 1 {
                    lzf_string(&mut out, &zl);
                } else {
                    string(&mut out, &zl);
                }
            }
            if empty_node {
                string(&mut out, &ziplist(&[]));
            }
            14
        }
        (Form::Intset, Data::Set(items)) => {
            string(&mut out, &intset(items));
            11
        }
        (Form::ZSetText, Data::ZSet(items)) => {
            length(&mut out, items.len());
            for (m, score) in items {
                string(&mut out, m.as_bytes());
                match score.as_str() {
                    "inf" => out.push(254),
                    "-inf" => out.push(255),
                    s => {
                        out.push(s.len() as u8);
                        out.extend_from_slice(s.as_bytes());
                    }
                }
            }
            3
        }
        (Form::ZSet2, Data::ZSet(items)) => {
            length(&mut out, items.len());
            for (m, score) in items {
                string(&mut out, m.as_bytes());
                out.extend_from_slice(&score.parse::<f64>().unwrap().to_le_bytes());
            }
            5
        }
        (Form::ZSetZiplist, Data::ZSet(items)) => {
            // Redis kept the ziplist ordered by score, then member.
            let mut sorted = items.clone();
            let score = |s: &str| s.parse::<f64>().unwrap();
            sorted.sort_by(|a, b| score(&a.1).total_cmp(&score(&b.1)).then(a.0.cmp(&b.0)));
            string(&mut out, &ziplist(&flat(&sorted)));
            12
        }
        (Form::Hash, Data::Hash(items)) => {
            length(&mut out, items.len());
            for (f, v) in items {
                string(&mut out, f.as_bytes());
                string(&mut out, v.as_bytes());
            }
            4
        }
        (Form::HashZipmap { free }, Data::Hash(items)) => {
            let p: Vec<(&[u8], &[u8])> =
                items.iter().map(|(f, v)| (f.as_bytes(), v.as_bytes())).collect();
            string(&mut out, &zipmap(&p, free));
            9
        }
        (Form::HashZiplist, Data::Hash(items)) => {
            string(&mut out, &ziplist(&flat(items)));
            13
        }
        (form, data) => panic!("cannot write {data:?} as {form:?}"),
    };
    (ty, out)
}

/// A whole RDB file of `version`: aux fields from version 7, resize hints from version 7,
/// then `dbs` (number, keys), EOF, and the CRC-64 from version 5 (`crc` overrides it).
pub fn file(version: u32, dbs: &[(u64, Vec<Key>)], crc: Option<u64>) -> Vec<u8> {
    let mut out = format!("REDIS{version:04}").into_bytes();
    if version >= 7 {
        for (k, v) in [("redis-ver", "3.2.0"), ("redis-bits", "64"), ("ctime", "1500000000")] {
            out.push(0xFA);
            string(&mut out, k.as_bytes());
            string(&mut out, v.as_bytes());
        }
    }
    for (db, keys) in dbs {
        out.push(0xFE);
        length(&mut out, *db as usize);
        if version >= 7 {
            out.push(0xFB);
            length(&mut out, keys.len());
            length(&mut out, keys.iter().filter(|k| !matches!(k.expire, Expire::Never)).count());
        }
        for k in keys {
            match k.expire {
                Expire::Never => {}
                Expire::Secs(s) => {
                    out.push(0xFD);
                    out.extend_from_slice(&(s as i32).to_le_bytes());
                }
                Expire::Ms(ms) => {
                    out.push(0xFC);
                    out.extend_from_slice(&ms.to_le_bytes());
                }
            }
            out.extend_from_slice(&k.meta);
            let (ty, payload) = value(&k.data, k.form);
            out.push(ty);
            string(&mut out, k.name.as_bytes());
            out.extend_from_slice(&payload);
        }
    }
    out.push(0xFF);
    if version >= 5 {
        let sum = crc.unwrap_or_else(|| crc64(&out));
        out.extend_from_slice(&sum.to_le_bytes());
    }
    out
}

/// A DUMP payload: type byte, payload, RDB version (2 bytes LE), CRC-64 (8 bytes LE).
pub fn dump(ty: u8, payload: &[u8], version: u16) -> Vec<u8> {
    let mut out = vec![ty];
    out.extend_from_slice(payload);
    out.extend_from_slice(&version.to_le_bytes());
    let sum = crc64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}
