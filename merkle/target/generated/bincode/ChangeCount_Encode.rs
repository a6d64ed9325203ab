impl :: bincode :: Encode for ChangeCount
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.relation, encoder) ?; :: bincode
        :: Encode :: encode(&self.inserted, encoder) ?; :: bincode :: Encode
        :: encode(&self.deleted, encoder) ?; core :: result :: Result ::
        Ok(())
    }
}