impl :: bincode :: Encode for State
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.program, encoder) ?; :: bincode
        :: Encode :: encode(&self.relations, encoder) ?; core :: result ::
        Result :: Ok(())
    }
}