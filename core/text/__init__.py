"""Text and naming: identifiers split into words (`identifiers`, `name_words`), tables named for people
(`naming`) and text made storable in PostgreSQL (`storable_text`)."""
