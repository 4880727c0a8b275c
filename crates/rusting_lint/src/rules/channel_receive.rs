//! `LINT_CHANNEL_RECEIVE`: taking messages from a channel in fixed code.
//!
//! What has arrived on a channel by a given tick depends on how fast the thread (or socket, or
//! device) at the other end ran: on one run a result is there at tick 100, on the next at tick
//! 101, and a non-blocking receive turns that timing straight into simulation state. The fix is to
//! let outside results enter the simulation at a defined tick: push them into the engine's
//! `OutsideQueue` (they enter at the start of a tick and are recorded in replays, so a replay sees
//! them at the same tick), or compute them with a deadline job (`Jobs<K>`), whose result is
//! handed back at a fixed tick.
//!
//! Caught: the method calls `try_recv`, `recv`, `recv_timeout`, `recv_deadline` and `try_iter`,
//! whatever the receiver (there is no type checker), unless the crate defines its own method of
//! that name.

use syn::Expr;

use crate::finding::LintCode;
use crate::report::Hit;
use crate::rules::{Rule, RuleContext};

/// The rule.
pub(crate) struct ChannelReceive;

/// The receiving methods of std's, crossbeam's and flume's channels.
const RECEIVES: [&str; 5] = [
    "try_recv",
    "recv",
    "recv_timeout",
    "recv_deadline",
    "try_iter",
];

impl Rule for ChannelReceive {
    fn check_expr(&self, expr: &Expr, cx: &RuleContext<'_>, out: &mut Vec<Hit>) {
        let Expr::MethodCall(call) = expr else {
            return;
        };
        let method = call.method.to_string();
        if !RECEIVES.contains(&method.as_str()) || cx.crate_defines_method(&method) {
            return;
        }
        out.push(Hit::at(
            LintCode::ChannelReceive,
            call.method.span(),
            format!(
                "`.{method}()` takes what another thread has sent so far, which depends on that \
                 thread's speed, so the tick a message is seen at changes from run to run; push \
                 outside results into the engine's `OutsideQueue` (they enter at the start of a \
                 tick and are recorded in replays) or use a deadline job (`Jobs<K>`)"
            ),
        ));
    }
}
