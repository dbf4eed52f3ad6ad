//! cuzk-shm-layout
