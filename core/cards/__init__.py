"""Cards as one reader may see them: the card head (`card_head`), a card with masked columns and filtered counts
taken out (`card_view`, `card_policies`) and a database summary written for that reader (`database_summary`)."""
