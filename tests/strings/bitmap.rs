//! Bitmaps and BITFIELD against a real Valkey 9.1 (issue 19).
