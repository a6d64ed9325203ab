impl < __Context > :: bincode :: Decode < __Context > for Commit
{
    fn decode < __D : :: bincode :: de :: Decoder < Context = __Context > >
    (decoder : & mut __D) ->core :: result :: Result < Self, :: bincode ::
    error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            parents : :: bincode :: Decode :: decode(decoder) ?, state : ::
            bincode :: Decode :: decode(decoder) ?, message : :: bincode ::
            Decode :: decode(decoder) ?, time : :: bincode :: Decode ::
            decode(decoder) ?, changes : :: bincode :: Decode ::
            decode(decoder) ?, stats : :: bincode :: Decode :: decode(decoder)
            ?,
        })
    }
} impl < '__de, __Context > :: bincode :: BorrowDecode < '__de, __Context >
for Commit
{
    fn borrow_decode < __D : :: bincode :: de :: BorrowDecoder < '__de,
    Context = __Context > > (decoder : & mut __D) ->core :: result :: Result <
    Self, :: bincode :: error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            parents : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, state : :: bincode :: BorrowDecode ::<
            '_, __Context >:: borrow_decode(decoder) ?, message : :: bincode
            :: BorrowDecode ::< '_, __Context >:: borrow_decode(decoder) ?,
            time : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, changes : :: bincode :: BorrowDecode ::<
            '_, __Context >:: borrow_decode(decoder) ?, stats : :: bincode ::
            BorrowDecode ::< '_, __Context >:: borrow_decode(decoder) ?,
        })
    }
}