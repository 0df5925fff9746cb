//! Instruction-like text in tool descriptions.
