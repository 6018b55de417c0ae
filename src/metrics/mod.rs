//! The Prometheus metrics endpoint's parts that need no server and no socket: the
//! [`snapshot::Snapshot`] of the figures (plain numbers, copied by the main thread), their
//! [`exposition`] as Prometheus text 0.0.4 or OpenMetrics 1.0 text, and the small HTTP/1.x
//! request parser and response writer of [`http`]. Uses nothing else of the crate.
//!
//! # How a scrape flows
//!
//! ```text
//!   scraper --GET /metrics--> endpoint thread (runtime::metrics): reads, parses (http)
//!                                  | request: a one-shot reply channel, then Waker::wake
//!                                  v
//!                             main event loop: copies the figures into a Snapshot
//!                             (commands::metrics), sends it back; nothing else
//!                                  |
//!                                  v
//!                             endpoint thread: adds its own figures (CPU, RSS, scrapes),
//!                             renders the text (exposition), writes the response
//! ```
//!
//! The main thread's cost per scrape is copying numbers: the text is formatted, and the
//! HTTP spoken, on the endpoint's thread, which never touches the keyspace.

pub mod exposition;
pub mod http;
pub mod snapshot;
