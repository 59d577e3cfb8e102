//! The messages: requests, responses, errors and the values they carry. Only
//! types live here; [`codec`](crate::codec) puts them on the wire.

pub mod error;
pub mod fabric;
pub mod ids;
pub mod ops;
pub mod request;
pub mod response;
