//! cuzk-synthesis
