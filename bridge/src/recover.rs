//! The history a (re)started bridge must not miss.
//!
//! The advanced subscriber asks every publisher it finds for its cache and holds live samples
//! back meanwhile. Yet in two of about five CI runs of `bridge/check.py` a restarted bridge
//! got a publisher's live samples and never the samples written while it was down (never seen
//! in about 35 runs by hand): once the subscriber has delivered a live sample, it drops the older
//! cached ones as duplicates. Without the subscriber's history (`--no-subscriber-history`) the
//! same loss shows in most runs.
//!
//! An advanced publisher numbers its samples from 0. So when the first sample seen from a
//! publisher is not its first, this asks the publisher's cache for those before it
//! (`<key>/@adv/pub/<zid>/<eid>/**?_sn=..n`) and holds that publisher's samples until the
//! answer is in: they then go on in the publisher's order. A cache that no longer holds the
//! early ones (a publisher past its `--cache` samples) answers with what it has, or nothing.
//! Whatever the subscriber delivered as well comes twice, which DDS readers of a restarted
//! bridge see anyway (every sample it writes is a new writer's).

use std::collections::{BTreeMap, HashMap};

use zenoh::handlers::FifoChannelHandler;
use zenoh::query::{ConsolidationMode, Reply, ReplyKeyExpr};
use zenoh::sample::Sample;
use zenoh::session::ZenohId;
use zenoh::Wait;

/// A publisher of another site: its Zenoh session and entity.
type Source = (ZenohId, u32);

/// A recovery under way: the cache's replies, what came so far, and the samples held.
struct Asked {
    key: String,
    replies: FifoChannelHandler<Reply>,
    got: BTreeMap<u32, Sample>,
    held: Vec<Sample>,
}

#[derive(Default)]
pub struct Recovery {
    /// Publishers seen, and for those whose history is being asked for, the question.
    seen: HashMap<Source, Option<Asked>>,
}

impl Recovery {
    /// Takes a sample the subscriber delivered; what may go on now is appended to `out`, in
    /// order.
    pub fn admit(&mut self, session: &zenoh::Session, sample: Sample, out: &mut Vec<Sample>) {
        let Some(info) = sample.source_info() else {
            out.push(sample);
            return;
        };
        let source = (info.source_id().zid(), info.source_id().eid());
        let sn = info.source_sn();
        match self.seen.get_mut(&source) {
            Some(Some(asked)) => asked.held.push(sample),
            Some(None) => out.push(sample),
            None if sn == 0 => {
                self.seen.insert(source, None);
                out.push(sample);
            }
            None => {
                let selector = format!(
                    "{}/@adv/pub/{}/{}/**?_sn=..{}",
                    sample.key_expr(),
                    source.0,
                    source.1,
                    sn - 1
                );
                // The cache answers with samples of the publication's own key, not the
                // question's: replies of any key must be accepted.
                let question = session
                    .get(&selector)
                    .accept_replies(ReplyKeyExpr::Any)
                    .consolidation(ConsolidationMode::None);
                match question.wait() {
                    Ok(replies) => {
                        tracing::info!(%selector, "the first sample of a publisher was not its first: asking its cache");
                        let key = sample.key_expr().to_string();
                        let held = vec![sample];
                        let got = BTreeMap::new();
                        let asked = Asked {
                            key,
                            replies,
                            got,
                            held,
                        };
                        self.seen.insert(source, Some(asked));
                    }
                    Err(e) => {
                        tracing::warn!(%selector, "cannot ask a publisher's cache: {e}");
                        self.seen.insert(source, None);
                        out.push(sample);
                    }
                }
            }
        }
    }

    /// Collects the caches' replies; a recovery whose question is answered (or timed out)
    /// lets its samples go on, appended to `out` in the publisher's order.
    pub fn poll(&mut self, out: &mut Vec<Sample>) {
        for asked in self.seen.values_mut() {
            let Some(a) = asked else {
                continue;
            };
            let done = loop {
                match a.replies.try_recv() {
                    Ok(Some(reply)) => {
                        if let Ok(s) = reply.into_result() {
                            if let Some(sn) = s.source_info().map(|i| i.source_sn()) {
                                a.got.insert(sn, s);
                            }
                        }
                    }
                    Ok(None) => break false,
                    // The channel closes when the query is over.
                    Err(_) => break true,
                }
            };
            if done {
                let Some(a) = asked.take() else {
                    continue;
                };
                let first_held = a
                    .held
                    .first()
                    .and_then(|s| s.source_info())
                    .map(|i| i.source_sn());
                let older = a
                    .got
                    .into_iter()
                    .filter(|(sn, _)| first_held.is_none_or(|f| *sn < f));
                let before = out.len();
                out.extend(older.map(|(_, s)| s));
                let n = out.len() - before;
                println!(
                    "zenoh -> DDS: {n} earlier samples of {} from its publisher's cache (the subscriber had not delivered them)",
                    a.key
                );
                out.extend(a.held);
            }
        }
    }
}
