//! Data representations on the participant's writers: how a writer converts its samples for a
//! matched reader that reads another representation (an XCDR1-only reader announcing none,
//! [`crate::qos::compat::Unannounced`]).

use tachyon_wire::{EntityId, Guid};

use super::{Error, Participant};
use crate::qos::DataRepresentation;
use crate::time::Instant;
use crate::writer::Transcoder;

impl Participant {
    /// Sets (or removes) how local writer `writer` converts a serialized sample into another
    /// representation. Without one, a matched reader that reads another representation than
    /// the writer writes gets GAPs instead of data (and a warning is logged).
    pub fn set_writer_transcoder(
        &mut self,
        writer: EntityId,
        transcoder: Option<Transcoder>,
    ) -> Result<(), Error> {
        self.writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .set_transcoder(transcoder);
        Ok(())
    }

    /// Matched reader `reader` of local writer `writer` reads `to` rather than what the
    /// writer writes (`None`: the writer's own): it leaves the writer's fan-out and gets each
    /// change on its own, converted by the writer's transcoder. Discovery decides this on
    /// matching; without discovery the caller does, after `match_reader`.
    pub fn set_reader_representation(
        &mut self,
        now: Instant,
        writer: EntityId,
        reader: &Guid,
        to: Option<DataRepresentation>,
    ) {
        if self.in_lane(writer) {
            let reader = *reader;
            let representation = to;
            self.queue_for_lane(super::lanes::LaneCommand::ReaderRepresentation {
                writer,
                reader,
                representation,
            });
            return;
        }
        if let Some(w) = self.writer_mut(writer) {
            w.set_reader_representation(now, reader, to);
        }
    }
}
