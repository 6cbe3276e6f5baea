/**
 * The statistics the parts of the active-message layer keep together, for `Context.stats` and
 * LAPI_Msgpoll: messages sent, and packets dropped as malformed or as duplicates. (Messages
 * received are counted where they complete, am/completions.ts; those an in-place receiver took in
 * am/receiver.ts.)
 */
export class AmState {
  /** Packets dropped because their version, type or length was wrong. */
  dropped = 0
  /** Duplicate packets recognised and dropped. */
  duplicates = 0
  /** Messages whose origin buffers became reusable. */
  sendCompleted = 0
}
