//! cuzk-c1
