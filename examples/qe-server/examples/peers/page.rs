//! The page every peer builds, shared by the peers command and the stages command.

use contract_runtime::Completeness;
use qe_server::contracts::{Ticket, TicketPage, TicketStatus};

/// The page every peer builds: `limit` generated tickets, complete. The TypeScript and
/// Python servers follow the same recipe, and the client checks that they do.
pub(crate) fn page(query: &str, limit: u32) -> TicketPage {
    let tickets = (1..=limit)
        .map(|i| Ticket {
            id: format!("T-{i}"),
            title: format!("Ticket {i}: login fails after password reset"),
            status: if i % 3 == 0 { TicketStatus::Closed } else { TicketStatus::Open },
        })
        .collect();
    TicketPage {
        query: query.to_owned(),
        tickets,
        next_cursor: None,
        completeness: Completeness::complete(u64::from(limit)),
    }
}
