export { type CascadeResult, forgetFact, forgetSession } from './cascade.js';
export { type ForgetUserOptions, forgetUser } from './forget-user.js';
export {
  ERASABLE_KINDS,
  ERASURE_RECEIPT_FORMAT,
  type ErasableKind,
  type ErasedKind,
  type ErasureReceipt,
  erasureDigest,
} from './receipt.js';
export { type ErasureCheck, verifyErased } from './verify.js';
