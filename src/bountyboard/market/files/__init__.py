"""Files as artifacts: upload slots, storage (local directory or S3) and signed download links."""
