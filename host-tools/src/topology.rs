//! Reading the whole topology, page by page, as one consistent snapshot.
//!
//! A topology read is paged (six items a datagram), and the fabric may change
//! between pages. Every page reports the generation it describes; the first
//! page's generation is sent with each later request, so the switch refuses
//! a page of a newer state with `StaleGeneration`, and the client also
//! compares the generation each page reports. Either way the walk starts
//! again from the first page, a bounded number of times.

use std::thread;
use std::time::Duration;

use serde::Serialize;
use weft_proto::{
    EndpointInfo, Error, FabricLink, Generation, PortInfo, Request, Response, SwitchInfo,
    TopologyCursor, TopologyItem,
};

use crate::client::{unexpected, Client};
use crate::error::ClientError;

/// How many times a walk starts over before the fabric is called unstable.
pub const MAX_WALKS: u32 = 5;

/// The most pages one walk reads before the listing is called runaway: far
/// more than a fabric of a few switches and a few hundred functions needs.
pub const MAX_PAGES: u32 = 4096;

/// The whole topology as of one generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Topology {
    /// The generation every page described.
    pub generation: Generation,
    /// The switches.
    pub switches: Vec<SwitchInfo>,
    /// The links between switches.
    pub links: Vec<FabricLink>,
    /// The physical ports.
    pub ports: Vec<PortInfo>,
    /// The enumerated functions.
    pub endpoints: Vec<EndpointInfo>,
    /// How many pages the successful walk read.
    pub pages: u32,
    /// How many walks it took (more than 1 if the fabric changed).
    pub walks: u32,
}

/// Reads every page of the topology of one generation (see the module docs).
pub fn read_topology(client: &mut Client) -> Result<Topology, ClientError> {
    for walk in 1..=MAX_WALKS {
        match walk_once(client)? {
            Some(mut topology) => {
                topology.walks = walk;
                return Ok(topology);
            }
            None => thread::sleep(Duration::from_millis(20) * walk),
        }
    }
    Err(ClientError::TopologyUnstable { walks: MAX_WALKS })
}

/// One walk from the first page; `None` if the generation changed on the way.
fn walk_once(client: &mut Client) -> Result<Option<Topology>, ClientError> {
    let mut cursor = TopologyCursor::START;
    let mut topology: Option<Topology> = None;
    for page_number in 1..=MAX_PAGES {
        let request = Request::Topology {
            cursor,
            generation: topology.as_ref().map(|t| t.generation),
        };
        let page = match client.request(&request) {
            Ok(Response::Topology(page)) => page,
            Ok(other) => return Err(unexpected(&request, &other)),
            Err(ClientError::Refused(Error::StaleGeneration { .. })) => return Ok(None),
            Err(error) => return Err(error),
        };
        let walk = topology.get_or_insert_with(|| Topology {
            generation: page.generation,
            switches: Vec::new(),
            links: Vec::new(),
            ports: Vec::new(),
            endpoints: Vec::new(),
            pages: 0,
            walks: 0,
        });
        if page.generation != walk.generation {
            return Ok(None);
        }
        walk.pages = page_number;
        for item in page.items {
            match item {
                TopologyItem::Switch(s) => walk.switches.push(s),
                TopologyItem::Link(l) => walk.links.push(l),
                TopologyItem::Port(p) => walk.ports.push(p),
                TopologyItem::Endpoint(e) => walk.endpoints.push(e),
            }
        }
        match page.next {
            None => return Ok(topology),
            Some(next) if next > cursor => cursor = next,
            Some(_) => return Err(ClientError::TopologyRunaway { pages: page_number }),
        }
    }
    Err(ClientError::TopologyRunaway { pages: MAX_PAGES })
}
