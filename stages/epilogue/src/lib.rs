//! cuzk-epilogue
