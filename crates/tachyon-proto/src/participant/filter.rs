//! Content filters on the participant's endpoints: a reader's own filter (applied on
//! reception) and the factory a writer builds its matched readers' announced filters with.

use tachyon_wire::parameter::ContentFilterProperty;
use tachyon_wire::{EntityId, Guid};

use super::{Error, Participant};
use crate::filter::{RemoteFilterFactory, SampleFilter};

impl Participant {
    /// Sets (or removes, `None`) the content filter of local reader `reader`: the data of
    /// samples received from now on that it refuses never reaches the cache (dispose and
    /// unregister always do). The reader's SEDP announcement carries the filter itself
    /// (`SubscriptionData::content_filter`), so writers can filter too.
    pub fn set_reader_filter(
        &mut self,
        reader: EntityId,
        filter: Option<SampleFilter>,
    ) -> Result<(), Error> {
        self.reader_mut(reader)
            .ok_or(Error::UnknownReader(reader))?
            .set_content_filter(filter);
        Ok(())
    }

    /// Sets (or removes) what local writer `writer` builds the content filters its matched
    /// readers announce with (PID_CONTENT_FILTER_PROPERTY). With it, the writer sends no
    /// sample that no matched reader wants (a GAP says so instead) and answers a repair
    /// request for a sample the asking reader does not want with a GAP. Readers already
    /// matched get their filters now.
    pub fn set_writer_filter_factory(
        &mut self,
        writer: EntityId,
        factory: Option<RemoteFilterFactory>,
    ) -> Result<(), Error> {
        let w = self
            .writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?;
        w.set_filter_factory(factory);
        let readers: Vec<Guid> = w.matched_readers().collect();
        for r in readers {
            self.apply_reader_filter(writer, &r);
        }
        Ok(())
    }

    /// Gives local writer `writer` the content filter matched reader `reader` announced, if
    /// any (discovery calls it on every match and re-announcement).
    pub(crate) fn give_reader_filter(
        &mut self,
        writer: EntityId,
        reader: &Guid,
        property: Option<&ContentFilterProperty>,
    ) {
        let command = super::lanes::LaneCommand::ReaderFilter {
            writer,
            reader: *reader,
            filter: property.cloned(),
        };
        if self.in_lane(writer) && self.queue_for_lane(command) {
            return;
        }
        if let Some(w) = self.writer_mut(writer) {
            w.set_reader_filter(reader, property);
        }
    }

    /// Gives matched reader `reader` of local (main-lane) writer `writer` a filter of the
    /// participant's own (a discovery server's topic scope, `discovery/server.rs`).
    pub(crate) fn set_reader_sample_filter(
        &mut self,
        writer: EntityId,
        reader: &Guid,
        filter: Option<SampleFilter>,
    ) {
        if let Some(w) = self.writer_mut(writer) {
            w.set_reader_sample_filter(reader, filter);
        }
    }

    /// Whether matched reliable reader `reader` of local (main-lane) writer `writer`
    /// answered one of its HEARTBEATs (`None`: no such writer or reliable reader).
    pub(crate) fn reader_synced(&self, writer: EntityId, reader: &Guid) -> Option<bool> {
        self.writer(writer)?.reader_synced(reader)
    }

    /// [`give_reader_filter`](Self::give_reader_filter) with the filter discovery holds.
    fn apply_reader_filter(&mut self, writer: EntityId, reader: &Guid) {
        let prefix = self.prefix;
        let property = self
            .discovery
            .as_ref()
            .and_then(|d| d.announced_filter(prefix, reader))
            .cloned();
        self.give_reader_filter(writer, reader, property.as_ref());
    }
}
