//! Geospatial indexes on sorted sets, as Valkey keeps them: a member's score is the 52-bit
//! geohash of its point, so that nearby points have nearby scores and an area is a few
//! score ranges. This module owns the arithmetic (no RESP, no keyspace): the geohash
//! (`hash`), distances and the polygon tests (`distance`), the cells that cover a search
//! (`area`), the scan of a [`ZSetObj`](crate::types::zset::ZSetObj) and the ordering of
//! what it found (`search`, `partial_sort`). The commands (`commands::geo`) parse
//! arguments into a [`Query`] and format what comes back.
//!
//! # Why exactly Valkey's arithmetic
//!
//! Replies print distances with four decimals and coordinates with seventeen, STOREDIST
//! keeps a distance's every bit as a score, and unsorted results come in the order the
//! cells are scanned. So the formulas are Valkey's, operation for operation (the order of a
//! product, where a division by two happens), the cells are chosen by the same estimate
//! and the same corrections, and ties in a `COUNT` sort are broken by the same unstable
//! partial quicksort. A cleverer search would find the same members in another order.
//!
//! # Layout
//! - `hash.rs`: encode, decode, neighbours, score spans, geohash strings.
//! - `distance.rs`: haversine distances, polygon center and containment.
//! - `area.rs`: shapes, bounding boxes, the nine cells of a search.
//! - `search.rs`: the scan of a sorted set and the sort by distance.
//! - `partial_sort.rs`: Valkey's partial quicksort, for `COUNT` without `ANY`.

pub mod area;
pub mod distance;
pub mod hash;
mod partial_sort;
pub mod search;

pub use area::{Query, Shape};
pub use distance::LonLat;
pub use search::{search, Found, Order, Point};
