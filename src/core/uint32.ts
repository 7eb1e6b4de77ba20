/** The largest uint32: the bound of protobuf uint32 fields (weights, counts) and of 32-bit hash halves. */
export const MAX_UINT32 = 0xffff_ffff;
