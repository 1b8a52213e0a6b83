"""The API's wire types: msgspec request and response Structs, one module an area, shared by the server and the
client. They import msgspec and the domain's vocabulary (its enums, bounds and catalogs), nothing else."""
