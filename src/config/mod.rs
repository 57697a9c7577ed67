//! Configuration: the seed file, the native shape, the search order.
