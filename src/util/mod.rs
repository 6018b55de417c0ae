//! Small utilities that every layer may use and that use nothing of the crate: today the
//! text of an OS error as C's `strerror` writes it.

/// An OS error as C's `strerror` writes it (`No such file or directory`), without the
/// ` (os error N)` that Rust's `Display` appends, so texts match Valkey's.
pub fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
