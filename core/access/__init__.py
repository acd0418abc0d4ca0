"""Access: who may see what (SPEC §6). `permissions` resolves a user's roles to visible databases and tables;
`row_predicates` and `data_policy` give the row filters and column masks that apply to them; `mask_key` keys the
hash masks; `viewer_facts` holds what a filtered reader may know of a table's rows."""
