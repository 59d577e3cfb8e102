//! The library behind `weftctl`: a management client for weft switches.
//!
//! It speaks [`weft_proto`] over UDP. The [`Client`] owns the socket, the
//! key and the request counters, and makes one request reliable: it resends
//! the same bytes when an answer is lost, backs off and asks again when the
//! switch is busy, and polls background operations to their end. The other
//! modules build the multi-request procedures (a topology walk, a firmware
//! update) on top of it, parse what an operator types, and render answers
//! for people.
//!
//! ```no_run
//! use weftctl::{Client, ClientConfig};
//! use weft_proto::{Key, Request};
//!
//! let switch = "127.0.0.1:7330".parse()?;
//! let mut client = Client::connect(ClientConfig::new(switch, Key::insecure_public()))?;
//! let identity = client.identify()?;
//! println!("switch {:#x} on {}", identity.switch.0, identity.board);
//! client.request_to_completion(&Request::SaveConfig)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod client;
pub mod error;
pub mod firmware;
pub mod key;
pub mod parse;
pub mod rates;
pub mod render;
pub mod table;
pub mod topology;

pub use client::{Client, ClientConfig, Exchange};
pub use error::ClientError;
