impl < __Context > :: bincode :: Decode < __Context > for OperatorStat
{
    fn decode < __D : :: bincode :: de :: Decoder < Context = __Context > >
    (decoder : & mut __D) ->core :: result :: Result < Self, :: bincode ::
    error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            relation : :: bincode :: Decode :: decode(decoder) ?, operator :
            :: bincode :: Decode :: decode(decoder) ?, entries_read : ::
            bincode :: Decode :: decode(decoder) ?, nodes_read : :: bincode ::
            Decode :: decode(decoder) ?, nodes_written : :: bincode :: Decode
            :: decode(decoder) ?,
        })
    }
} impl < '__de, __Context > :: bincode :: BorrowDecode < '__de, __Context >
for OperatorStat
{
    fn borrow_decode < __D : :: bincode :: de :: BorrowDecoder < '__de,
    Context = __Context > > (decoder : & mut __D) ->core :: result :: Result <
    Self, :: bincode :: error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            relation : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, operator : :: bincode :: BorrowDecode
            ::< '_, __Context >:: borrow_decode(decoder) ?, entries_read : ::
            bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, nodes_read : :: bincode :: BorrowDecode
            ::< '_, __Context >:: borrow_decode(decoder) ?, nodes_written : ::
            bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?,
        })
    }
}