pub mod circuits;
